import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { describe, it } from 'node:test';
import { addressRefusal } from '../../src/events/webhook-target.js';
import { createPostJson } from '../../src/events/webhook-post.js';
import { startServer } from '../helpers/server.js';

describe('webhook targets: loopback only when allowed, never link-local', () => {
  it('classifies every spelling of the forbidden addresses', () => {
    const refused = [
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0.0.0.0',
      '::',
      '169.254.169.254',
      '::ffff:169.254.169.254',
      'fe80::1',
      'FE80::abcd',
      '224.0.0.1',
      'ff02::1',
    ];
    for (const address of refused) assert.notEqual(addressRefusal(address, false), undefined, address);
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      assert.equal(addressRefusal(address, true), undefined, `${address} with loopback allowed`);
    }
    for (const address of ['169.254.169.254', 'fe80::1', '0.0.0.0']) {
      assert.notEqual(addressRefusal(address, true), undefined, `${address} even with loopback allowed`);
    }
    for (const address of ['192.0.2.10', '10.1.2.3', '2001:db8::1', '93.184.216.34']) {
      assert.equal(addressRefusal(address, false), undefined, address);
    }
  });

  it('refuses a host name that resolves to loopback, and a literal one, before any byte is sent', async () => {
    let requests = 0;
    const receiver = createServer((_request, response) => {
      requests++;
      response.end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    // The name resolves to the receiver on loopback, as a rebinding DNS answer would.
    const toLoopback: LookupFunction = (_hostname, options, callback) => {
      if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
      else callback(null, '127.0.0.1', 4);
    };
    const signal = new AbortController().signal;
    try {
      const refusing = createPostJson(false, toLoopback);
      await assert.rejects(refusing(`http://hooks.example.test:${port}/`, '{}', {}, signal), /loopback/);
      await assert.rejects(refusing(`http://127.0.0.1:${port}/`, '{}', {}, signal), /loopback/);
      await assert.rejects(refusing(`http://[::ffff:7f00:1]:${port}/`, '{}', {}, signal), /loopback/);
      await assert.rejects(
        refusing('http://169.254.169.254/latest/meta-data/', '{}', {}, signal),
        /link-local/,
      );
      assert.equal(requests, 0);
      await createPostJson(true, toLoopback)(`http://hooks.example.test:${port}/`, '{}', {}, signal);
      assert.equal(requests, 1, 'allowed, the same name is reached');
    } finally {
      receiver.close();
    }
  });

  it("refuses to start with a webhook the encoders' output rules forbid, naming the key", async () => {
    await assert.rejects(
      startServer({
        config: {
          ffmpeg: { access: { output: { block: ['@hooks\\.internal/'] } } },
          events: {
            webhooks: [
              { url: 'http://user:pw@hooks.internal/in', events: [], secret: 'secret-0123456789ab' },
            ],
          },
        },
      }),
      (error: Error) => {
        assert.match(error.message, /^events\.webhooks: item 1: .*ffmpeg\.access\.output\.block/);
        assert.equal(error.message.includes('pw'), false, 'user info is not printed');
        return true;
      },
    );
  });
});
