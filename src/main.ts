import { readConfig, run } from './run.js';

// `npm start`: the configuration comes from the environment.
await run(readConfig());
