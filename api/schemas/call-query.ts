/**
 * The query of GET /api/v1/calls (its translation to the store's CallFilter
 * is api/present/call-filter.ts). Strict, like the
 * tail's connect query: an unknown parameter (`namepsace=prod`) is a 400
 * naming it, never an unfiltered list. A repeated parameter arrives as an
 * array and is refused by the string schemas, naming the field.
 */

import { z } from 'zod';
import { MAX_PAGE_SIZE } from '../../store/index.js';
import { booleanParam, nameParam } from './params.js';
import { refineTimeWindow, timeParam } from './time-param.js';

export const DEFAULT_PAGE_SIZE = 100;

export const CNI_COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'] as const;
export const CALL_STATUSES = ['running', 'finished', 'incomplete'] as const;


export const callListQuerySchema = z
  .strictObject({
    namespace: nameParam('Pod namespace (K8S_POD_NAMESPACE)').optional(),
    pod: nameParam('Pod name (K8S_POD_NAME)').optional(),
    podUid: nameParam('Pod UID (K8S_POD_UID)').optional(),
    containerId: nameParam('CNI_CONTAINERID: the sandbox; an unambiguous prefix of one (as `cnirec` prints it, 12 characters) matches it too').optional(),
    command: z.enum(CNI_COMMANDS).optional().describe('CNI_COMMAND; STATUS lists the heartbeats kept (successful ones are hidden otherwise)'),
    plugin: nameParam('Plugin binary name (bridge, host-local…)').optional(),
    network: nameParam('The CNI network: `name` from the call’s stdin, else the network whose active conf lists the plugin type').optional(),
    failed: booleanParam('true: calls that ended badly (non-zero exit or a signal); false: calls that succeeded').optional(),
    minDurationMs: z.coerce.number().min(0).optional().describe('Only calls that took at least this long (ms)'),
    since: timeParam('Calls started at or after').optional(),
    until: timeParam('Calls started before (exclusive)').optional(),
    includeVersion: booleanParam('Include VERSION probes (hidden by default; shown anyway when command=VERSION)').optional(),
    status: z.enum(CALL_STATUSES).optional(),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_SIZE)
      .default(DEFAULT_PAGE_SIZE)
      .describe(`Page size, 1 to ${MAX_PAGE_SIZE}`),
    cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page'),
  })
  .superRefine(refineTimeWindow);

export type CallListQuery = z.output<typeof callListQuerySchema>;
