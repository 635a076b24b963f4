/**
 * What marks the collector's canary (canary.ts runs it): the CNI_COMMAND it
 * is exec'd with, which makes it traced and never a call, and its one write,
 * a known payload that full mode's probes must read right.
 */

export const CANARY_COMMAND = '__cnirec_canary__';
export const CANARY_OUTPUT = 'cnirec-canary-payload\n';
