// phux context, V2 placement (phux integrations/opencode V2 plugin: the latest context text is
// pushed into the system prompt before every model dispatch). OpenCode 1.18.33 has no V2
// `context` hook, so this uses `experimental.chat.system.transform`, which runs for every request
// (agent, title and compaction) and turns the pushed entry into a second system message. While
// the fleet is unchanged the text is byte-identical; each change replaces it, which changes the
// request head in front of the whole message history.
import { next, latest } from './phux-stream.mjs';

export const PhuxContextV2 = async () => ({
  'experimental.chat.system.transform': async (input, output) => {
    if (!input.sessionID) return;
    next(input.sessionID);
    const text = latest(input.sessionID);
    if (text) output.system.push(text);
  },
});
