// The bearer token check: the header parsed strictly enough, the comparison in constant time.
import { describe, expect, it } from 'vitest';
import { bearerToken, createTokenCheck, websocketProtocolToken } from '../../api/auth.js';

describe('the Authorization header', () => {
  it.each([
    ['Bearer s3cret', 's3cret'],
    ['bearer s3cret', 's3cret'],
    ['BEARER   s3cret  ', 's3cret'],
    ['Bearer two words', 'two words'],
  ])('%j carries the token %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', 'Basic czNjcmV0', 's3cret', 'Bearers3cret'])('%j carries no token', (header) => {
    expect(bearerToken(header)).toBeNull();
  });
});

describe('the token check', () => {
  const check = createTokenCheck('s3cret');

  it('accepts the token', () => {
    expect(check('s3cret')).toBe(true);
  });

  it.each([null, '', 's3cre', 's3cret ', 'S3CRET', 's3cret-and-more'])('refuses %j, whatever its length', (presented) => {
    expect(check(presented)).toBe(false);
  });
});

describe('the token a browser offers as a websocket subprotocol', () => {
  const offer = (token: string) => `cnirec.v1, cnirec.token.${Buffer.from(token, 'utf8').toString('base64url')}`;

  it.each(['s3cret', 'with spaces and / + = signs', 'ünïcødé'])('carries %j, base64url-encoded', (token) => {
    expect(websocketProtocolToken(offer(token))).toBe(token);
  });

  it.each([undefined, '', 'cnirec.v1', 'cnirec.token.', 'cnirec.token.not base64!', 'token.czNjcmV0'])('%j carries no token', (header) => {
    expect(websocketProtocolToken(header)).toBeNull();
  });
});
