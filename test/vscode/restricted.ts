// The restricted-mode suite: the workspace is opened untrusted (workspace trust enabled).
import './restricted.test.js';
