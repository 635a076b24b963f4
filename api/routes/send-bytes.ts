/**
 * Sends a body already encoded where it was read (read-ops.ts) as it is,
 * past any serializer. The route's zod types describe the object the bytes
 * encode, which is why this takes the plain reply type.
 */

import type { FastifyReply } from 'fastify';
import { JSON_TYPE } from '../read-ops.js';

export function sendBytes(reply: FastifyReply, body: Buffer | string, contentType = JSON_TYPE): FastifyReply {
  return reply.type(contentType).send(body);
}
