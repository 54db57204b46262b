import { refuseUnsupportedNode } from './node-version.js';

// `npm start`: on a Node.js outside `engines` it says so and exits 1 before loading the rest.
refuseUnsupportedNode();
const { readConfig, run } = await import('./server.js');
// The configuration comes from the environment.
await run(readConfig());
