import { it } from 'vitest';
import fs from 'node:fs';
import { startApi } from './api-harness.js';

it('smoke', async () => {
  const h = await startApi({ token: 's3cret' });
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { authorization: 'Bearer s3cret' } });
  fs.writeFileSync('/tmp/smoke/openapi.json', JSON.stringify(res.json(), null, 1));
  await h.close();
});
