/** Sends a read's answer as the route's reply, and releases it once the response is done with it. */

import type { FastifyReply } from 'fastify';
import type { ReadAnswer } from './reads.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A Buffer body is written as it is, past any serializer (JSON already
 * encoded where it was read); a string is sent as it is under its content
 * type. The route's zod types describe the object the bytes encode, which
 * is why this takes the plain reply type. The answer is released when the
 * response closes: finished, or cut off by the client, node has let go of
 * the bytes either way.
 */
export function sendAnswer(reply: FastifyReply, answer: ReadAnswer<Buffer | string>, contentType = JSON_TYPE): FastifyReply {
  reply.raw.once('close', answer.release);
  return reply.type(contentType).send(answer.body);
}
