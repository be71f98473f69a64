// The trusted-workspace extension-host suite (order matters: activation is checked first).
import './activation.test.js';
import './sessions.test.js';
import './diagnostics.test.js';
import './terminal.test.js';
import './capture.test.js';
import './fleet.test.js';
import './timeline.test.js';
import './request-diff.test.js';
import './settings.test.js';
import './rule-overrides.test.js';
import './scale.test.js';
