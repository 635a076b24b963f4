/**
 * Response serializers for the routes that return many calls (lists, the
 * pod story). fastify-type-provider-zod encodes every response through its
 * zod schema before JSON.stringify; for a page of 100 calls or a pod's 300
 * trees that walk cost more than the query (bench/results/api-latency.md).
 * These responses are built only by the typed mappers in api/present and
 * api/schemas, whose output has exactly the schema's shape, so plain
 * JSON.stringify says the same; the route tests check every such response
 * against its zod schema. Error responses keep the same plain path.
 */

import type { FastifySerializerCompiler } from 'fastify';
import type { CallTree, PodStory, Sandbox } from '../schemas/pod-story.js';

/** For a route whose every response is a plain object of its schema's shape. */
export const plainJsonSerializer: FastifySerializerCompiler<unknown> = () => (data: unknown) => JSON.stringify(data);

/** The pod route: 200 is a story (see serializePodStory), anything else plain JSON. */
export const podStorySerializer: FastifySerializerCompiler<unknown> = ({ httpStatus }) =>
  httpStatus === '200' ? (data: unknown) => serializePodStory(data as PodStory) : (data: unknown) => JSON.stringify(data);

/**
 * The story lists every tree twice, at the top and again under its
 * sandbox: each tree is stringified once and its text used in both places,
 * which halves the work for a pod with hundreds of calls.
 */
export function serializePodStory(story: PodStory): string {
  const memo = new Map<CallTree, string>();
  const tree = (t: CallTree): string => {
    let json = memo.get(t);
    if (json === undefined) {
      json = JSON.stringify(t);
      memo.set(t, json);
    }
    return json;
  };
  const trees = (ts: readonly CallTree[]) => `[${ts.map(tree).join(',')}]`;
  const sandbox = (sb: Sandbox): string => {
    // Every field but the trees through JSON.stringify, so a field added to Sandbox is never lost here.
    const { calls, ...rest } = sb;
    const head = JSON.stringify(rest);
    return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"calls":${trees(calls)}}`;
  };
  const { calls, sandboxes, ...rest } = story;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"calls":${trees(calls)},"sandboxes":[${sandboxes.map(sandbox).join(',')}]}`;
}
