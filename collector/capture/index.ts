export * from './capture-policy.js';
export type { CaptureControl, CaptureListener, CaptureRequest, CaptureStatus } from './capture-control.js';
export { scopeEvents } from './capture-scope.js';
