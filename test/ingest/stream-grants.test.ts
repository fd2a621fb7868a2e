import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamGrants } from '../../src/ingest/stream-grants.js';

describe('per-run ingest tokens', () => {
  it('open the streams they were given, none other, and nothing once revoked', () => {
    let changes = 0;
    const grants = new StreamGrants(() => changes++);
    const cam = grants.issue();
    const other = grants.issue();
    assert.notEqual(cam.token, other.token);
    assert.match(cam.token, /^[A-Za-z0-9_-]{24}$/, 'safe in a URL query and an SRT stream id');
    assert.deepEqual(cam.secrets, [cam.token], 'what the reports of a run mask');
    assert.equal(grants.allows(cam.token, '/live/cam'), false, 'a fresh token opens nothing');

    cam.allow('/live/cam');
    cam.allow('/live/cam');
    assert.equal(changes, 1, 'a stream given twice is one change');
    assert.equal(grants.allows(cam.token, '/live/cam'), true);
    assert.equal(grants.allows(cam.token, '/live/cam2'), false);
    assert.equal(grants.allows(other.token, '/live/cam'), false);
    assert.equal(grants.allows(`${cam.token}x`, '/live/cam'), false);
    assert.equal(grants.allows('', '/live/cam'), false);
    assert.deepEqual(grants.list(), [
      { token: cam.token, resources: ['/live/cam'] },
      { token: other.token, resources: [] },
    ]);

    cam.revoke();
    cam.revoke();
    assert.equal(changes, 2, 'a second revoke changes nothing');
    assert.equal(grants.allows(cam.token, '/live/cam'), false);
    cam.allow('/live/cam');
    assert.equal(grants.allows(cam.token, '/live/cam'), false, 'a revoked token takes no stream');
    assert.deepEqual(grants.list(), [{ token: other.token, resources: [] }]);
  });
});
