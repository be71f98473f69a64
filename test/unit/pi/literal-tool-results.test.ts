/**
 * Tool results long enough to be held as bytes (read.ts holdLiterals, core/literal.ts JsonLiteral):
 * every place that reads their text gets it — the request bytes in all three APIs (a single text,
 * several texts joined, texts beside an image), the break location, its before/after excerpts and
 * its cause — as for a short text. The type keeps it so: tool-result content is not a ContentBlock.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { blocksOf } from '../../../src/core/chain.js';
import { JsonLiteral, LITERAL_CHARS } from '../../../src/core/literal.js';
import { readPiFile } from '../../../src/hosts/pi/read.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import type { ContentBlock, ToolResultMessage } from '../../../src/hosts/pi/schema.js';
import { HEADER, assistant, cleanup, entry, tempDir, toolCall, user, writeJsonl } from './helpers.js';

// 700 characters, one outside Latin-1 (V8 would hold it at 2 bytes per character), quotes and a newline.
const LONG = `Hello from a.txt → "quoted"\n${'line of the file, the quick brown fox; '.repeat(17)}`.slice(0, 700);
const EDITED = LONG.slice(0, 400) + 'EDITED' + LONG.slice(406);
const dec = new TextDecoder();

function result(id: string, parentId: string, content: object[]): object {
  return entry(id, parentId, 'message', { message: { role: 'toolResult', toolCallId: 'call_1', toolName: 'read', content, isError: false, timestamp: 1 } });
}

/** u1 → a1 (tool call) → r (the long result) → a2, then a second branch from a1 with the edited result → a3. */
function session(api: string, provider: string, model: string, content: (t: string) => object[]): object[] {
  const o = { api, provider, model };
  return [
    HEADER,
    user('u1', null, 'read a.txt'),
    assistant('a1', 'u1', [toolCall('call_1')], { ...o, stopReason: 'toolUse' }),
    result('r1', 'a1', content(LONG)),
    assistant('a2', 'r1', 'It says hello.', o),
    result('r2', 'a1', content(EDITED)),
    assistant('a3', 'r2', 'It says hello, edited.', o),
  ];
}

const single = (t: string) => [{ type: 'text', text: t }];
const several = (t: string) => [{ type: 'text', text: t }, { type: 'text', text: 'second part' }];
const withImage = (t: string) => [{ type: 'text', text: t }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }];

describe('Pi tool results held as bytes', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(async () => cleanup(dir));

  const cases: Array<[string, string, string, string, (t: string) => object[], (t: string) => unknown]> = [
    ['anthropic, one text', 'anthropic-messages', 'anthropic', 'claude-sonnet-4-5', single, (t) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: t, is_error: false }] })],
    ['anthropic, two texts', 'anthropic-messages', 'anthropic', 'claude-sonnet-4-5', several, (t) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: `${t}\nsecond part`, is_error: false }] })],
    [
      'anthropic, text and image',
      'anthropic-messages',
      'anthropic',
      'claude-sonnet-4-5',
      withImage,
      (t) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: t }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }], is_error: false }] }),
    ],
    ['chat completions', 'openai-completions', 'openai', 'gpt-5', single, (t) => ({ role: 'tool', content: t, tool_call_id: 'call_1' })],
    ['responses', 'openai-responses', 'openai', 'gpt-5-codex', single, (t) => ({ type: 'function_call_output', call_id: 'call_1', output: t })],
  ];

  for (const [name, api, provider, model, content, wire] of cases) {
    it(`${name}: the request carries the text byte for byte, and the edit breaks inside it with the text around it`, async () => {
      const file = join(dir, `${api}-${name.replace(/\W+/g, '-')}.jsonl`);
      await writeJsonl(file, session(api, provider, model, content));
      // The reader holds it as bytes (what this test is about).
      const read = await readPiFile(file);
      const held = (read.byId.get('r1')!.entry as { message: ToolResultMessage }).message.content[0];
      assert.ok(LONG.length >= LITERAL_CHARS && held.type === 'text' && held.text instanceof JsonLiteral);

      const s = await readPiSession(file);
      assert.deepEqual(s.diagnostics, []);
      assert.equal(s.requests.length, 3);
      // The result's item in #2 and #3: what Pi sends, serialized from the characters.
      for (const [i, text] of [[1, LONG], [2, EDITED]] as const) {
        const blocks = blocksOf(s.requests[i].tail).filter((b) => b.segment === 'messages');
        // The last message item: the tool result (the request is sent after it).
        const item = blocks.filter((b) => b.item === blocks[blocks.length - 1].item);
        const joined = item.map((b) => dec.decode(b.bytes)).join(',');
        assert.ok(joined.includes(JSON.stringify(wire(text)).slice(1, -1)), `${name} #${i + 1}: ${joined.slice(0, 200)}`);
      }
      // #3 compared with #2: the break is in the result's text at the edit, the excerpts show its characters.
      const a = analyzeSession(s).requests[2];
      assert.equal(a.matched, 2);
      assert.ok(a.break, 'a break');
      assert.match(a.break.path, api === 'openai-responses' ? /\.output$/ : api === 'openai-completions' ? /\.content$/ : /\.content\[0\]\.content/);
      assert.match(a.break.before, /fox; li/);
      assert.ok(a.break.after.includes('EDITED'), a.break.after);
      assert.equal(a.break.before.slice(0, a.break.excerptAt), a.break.after.slice(0, a.break.excerptAt));
      assert.deepEqual(a.causes.map((c) => c.kind), ['history-rewritten']);
    });
  }

  it('tool-result content is not a ContentBlock: a reader of ContentBlock text cannot be handed byte-held text', () => {
    const onlyBlocks = (_: ContentBlock[]) => 0;
    const content: ToolResultMessage['content'] = [{ type: 'text', text: new JsonLiteral(Buffer.from('"x"'), 1) }];
    // @ts-expect-error LiteralTextContent is neither a text block (its text is bytes) nor an "other" block.
    assert.equal(onlyBlocks(content), 0);
  });
});
