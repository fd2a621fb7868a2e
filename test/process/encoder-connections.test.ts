import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, connect, type Socket, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { EncoderConnections, socketInodes } from '../../src/process/supervise/encoder-connections.js';

const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 22222 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 33333 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:C351 0100007F:1F90 06 00000000:00000000 03:00001234 00000000     0        0 0 3 0000000000000000
`;

describe('which connections an encoder opened', () => {
  it('finds the client end of a connection in a /proc/net/tcp table by its ports', () => {
    assert.deepEqual(socketInodes(TABLE, 0xc350, 0x1f90), ['22222']);
    assert.deepEqual(socketInodes(TABLE, 0x1f90, 0xc350), ['33333']);
    // A socket in TIME_WAIT has no inode and belongs to nobody.
    assert.deepEqual(socketInodes(TABLE, 0xc351, 0x1f90), []);
  });

  it("tells a listed process's connection from one of this process's own (real /proc)", async () => {
    const accepted: Socket[] = [];
    const server = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const child = spawn(
      process.execPath,
      ['-e', `require('net').connect(${port}, '127.0.0.1'); setInterval(() => {}, 1000)`],
      { stdio: 'ignore' },
    );
    const own = connect(port, '127.0.0.1');
    const pids = new Set<number>([child.pid as number]);
    const connections = new EncoderConnections({ procRoot: '/proc', encoderPids: () => pids });
    try {
      const deadline = Date.now() + 10_000;
      while (accepted.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(accepted.length, 2);
      const verdicts = await Promise.all(accepted.map(async (socket) => connections.fromEncoder(socket)));
      assert.deepEqual([...verdicts].sort(), [false, true]);
      const fromChild = accepted[verdicts.indexOf(true)] as Socket;
      assert.notEqual(fromChild.remotePort, own.localPort);
      // Once known, the verdict comes without a promise (every request after a connection's first).
      assert.equal(connections.fromEncoder(fromChild), true);
      assert.equal(connections.fromEncoder(accepted[verdicts.indexOf(false)] as Socket), false);
      // No encoder running: nothing is looked up, and no promise is made.
      const idle = new EncoderConnections({ procRoot: '/proc', encoderPids: () => new Set() });
      assert.equal(idle.fromEncoder(fromChild), false);
    } finally {
      child.kill('SIGKILL');
      own.destroy();
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
