/**
 * Response serializers for the routes that return many calls (lists, the
 * pod story). fastify-type-provider-zod encodes every response through its
 * zod schema before JSON.stringify; for a page of 100 calls or a pod's 300
 * trees that walk cost more than the query (bench/results/api-latency.md).
 * These responses are built only by the typed mappers in api/present,
 * whose output has exactly the schema's shape, so plain
 * JSON.stringify says the same; the route tests check every such response
 * against its zod schema. Error responses keep the same plain path.
 */

import type { FastifySerializerCompiler } from 'fastify';
import type { CallTree, PodStory, Sandbox } from '../schemas/pod-story.js';

/** For a route whose every response is a plain object of its schema's shape. */
export const plainJsonSerializer: FastifySerializerCompiler<unknown> = () => (data: unknown) => JSON.stringify(data);

/**
 * The pod story as the bytes of its JSON, for the route to send as they
 * are. The story lists every tree twice, at the top and again under its
 * sandbox: each tree is stringified and UTF-8 encoded once and its bytes
 * used in both places. Sent as a string, the ~600 KiB of a pod with
 * hundreds of calls would be scanned twice more by fastify and node (its
 * byte length, then its encoding); a Buffer is written as it is.
 */
export function encodePodStory(story: PodStory): Buffer {
  const parts: Buffer[] = [];
  const text = (s: string) => parts.push(Buffer.from(s, 'utf8'));
  const memo = new Map<CallTree, Buffer>();
  const trees = (ts: readonly CallTree[]) => {
    ts.forEach((t, i) => {
      let bytes = memo.get(t);
      if (bytes === undefined) {
        bytes = Buffer.from(JSON.stringify(t), 'utf8');
        memo.set(t, bytes);
      }
      if (i > 0) parts.push(COMMA);
      parts.push(bytes);
    });
  };
  // Every field but the trees through JSON.stringify, so a field added to PodStory or Sandbox is never lost here.
  const { calls, sandboxes, ...rest } = story;
  text(`${openObject(rest)}"calls":[`);
  trees(calls);
  text('],"sandboxes":[');
  sandboxes.forEach((sb: Sandbox, i) => {
    const { calls: sandboxCalls, ...sandboxRest } = sb;
    text(`${i > 0 ? ',' : ''}${openObject(sandboxRest)}"calls":[`);
    trees(sandboxCalls);
    text(']}');
  });
  text(']}');
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');

/** `{"a":1,` for {a: 1}, `{` for {}: an object's JSON left open for more fields. */
function openObject(o: object): string {
  const json = JSON.stringify(o);
  return json.length > 2 ? `${json.slice(0, -1)},` : '{';
}
