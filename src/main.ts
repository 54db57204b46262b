import { readConfig, run } from './server.js';

// `npm start`: the configuration comes from the environment.
await run(readConfig());
