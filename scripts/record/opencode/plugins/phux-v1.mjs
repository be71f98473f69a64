// phux context, V1 placement (ADR-0067 decision 3; phux integrations/opencode V1 `chat.message`):
// the fleet context is appended to the new user message as a synthetic text part, so it lands at
// the conversation tail and earlier bytes never change. Differences from the real V1 plugin, both
// forced by OpenCode 1.18.33: the part id must start with "prt" (the real "phux-context-<msg>-<seq>"
// is rejected with SchemaError), and parts are sent in id order, so "prt_z…" puts the context
// after the user's text. The compacting hook keeps a canonical checkpoint in the summary prompt
// and forces a checkpoint on the next message, like the real plugin.
import { next, forceCheckpoint } from './phux-stream.mjs';

const COMPACTION_PREFIX = 'Preserve this canonical phux fleet checkpoint in the compacted context; later phux-context sequences supersede it.\n';

export const PhuxContextV1 = async () => ({
  'chat.message': async (_input, output) => {
    const emission = next(output.message.sessionID);
    if (!emission) return;
    output.parts.push({
      id: `prt_zphux${output.message.id.slice(4)}s${emission.seq}`,
      sessionID: output.message.sessionID,
      messageID: output.message.id,
      type: 'text',
      text: emission.text,
      synthetic: true,
      metadata: { phuxContext: { version: emission.version, kind: emission.kind, seq: emission.seq } },
    });
  },
  'experimental.session.compacting': async (input, output) => {
    const emission = next(input.sessionID, { force: true });
    if (emission) output.context.push(COMPACTION_PREFIX + emission.text);
    forceCheckpoint(input.sessionID);
  },
});
