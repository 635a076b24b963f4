/** What a call did to the kernel (full capture) and what the kernel said (every mode): contract v1. */

import { z } from 'zod';

export const kernelMessageSchema = z
  .object({
    at: z.string().describe('When the kernel raised it (ISO 8601)'),
    pid: z.number().int(),
    process: z.string().describe('The binary of the process that asked (the plugin or a helper)'),
    message: z.string().describe("The kernel's own text (netlink extended ack), e.g. `mtu greater than device maximum`"),
  })
  .describe('KernelMessage');

export const KERNEL_OBJECTS = ['link', 'address', 'route', 'neighbour', 'rule', 'qdisc', 'filter', 'sysctl', 'iptables', 'nftables'] as const;

export const kernelChangeSchema = z
  .object({
    at: z.string().describe('When it was asked (ISO 8601)'),
    pid: z.number().int(),
    netns: z.string().describe('`host`, the call’s CNI_NETNS path, or `netns:[<inode>]`'),
    object: z.enum(KERNEL_OBJECTS),
    action: z.enum(['add', 'delete', 'change']),
    subject: z.string().describe('One line as ip, sysctl or iptables would say it: `10.96.7.2/24 dev eth0`, `net.ipv6.conf.eth0.accept_dad = 0`'),
    ok: z.boolean().nullable().describe('The kernel’s answer; null when none was seen'),
    error: z
      .object({ errno: z.string().describe('EINVAL…, or `exit N` for a helper'), message: z.string().nullable().describe("The kernel's text, when it gave one") })
      .nullable(),
    attributes: z.record(z.string(), z.string()).describe('Decoded details: interface index, kind, table, a decoder’s reason…'),
  })
  .describe('KernelChange');

export type KernelChangeView = z.infer<typeof kernelChangeSchema>;
