/**
 * The baseline of bench/rtmp-relay.ts: the least a relay can do. The first connection is the
 * publisher; every byte it sends is written to every other connection, as it came, with no
 * parsing, no per-player state and no bound. Run as a child process; prints its port.
 */
import { createServer, type Socket } from 'node:net';

const players = new Set<Socket>();
let publisher: Socket | undefined;
const server = createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.once('data', (first: Buffer) => {
    // The first byte says who it is: 'P' publishes, anything else plays.
    if (first[0] === 0x50 && publisher === undefined) {
      publisher = socket;
      const rest = first.subarray(1);
      if (rest.length > 0) for (const player of players) player.write(rest);
      socket.on('data', (data: Buffer) => {
        for (const player of players) player.write(data);
      });
    } else {
      players.add(socket);
      socket.on('close', () => players.delete(socket));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address !== 'string') process.stdout.write(`${address.port}\n`);
});
