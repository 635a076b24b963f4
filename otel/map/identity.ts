/**
 * Who is sending: the OTLP resource (service.name `cnirec` unless
 * OTEL_SERVICE_NAME says otherwise, service.version, host.name, and
 * whatever OTEL_RESOURCE_ATTRIBUTES adds, e.g. the DaemonSet's
 * k8s.node.name) and the instrumentation scope. Built once at start-up.
 */

import type { InstrumentationScope } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { SEMCONV } from './attribute-names.js';

export interface ExportIdentity {
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

export const DEFAULT_SERVICE_NAME = 'cnirec';

export function exportIdentity(opts: { readonly version: string; readonly hostName: string; readonly attributes: Readonly<Record<string, string>> }): ExportIdentity {
  const attributes = {
    [SEMCONV.serviceName]: DEFAULT_SERVICE_NAME,
    [SEMCONV.serviceVersion]: opts.version,
    [SEMCONV.hostName]: opts.hostName,
    // OTEL_RESOURCE_ATTRIBUTES (and OTEL_SERVICE_NAME through it) win over the defaults above.
    ...opts.attributes,
  };
  // defaultResource: telemetry.sdk.{name,language,version}, as every SDK sends.
  return { resource: defaultResource().merge(resourceFromAttributes(attributes)), scope: { name: 'cnirec', version: opts.version } };
}
