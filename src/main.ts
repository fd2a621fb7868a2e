// The server's entry when run from source (tsx: the tests, development). The installed server starts
// through the built entry, src/boot/main.ts (dist/main.js), which runs the same runServer.
import { runServer } from './start.js';

runServer();
