/** What a call did to the kernel: its tracer records decoded into changes and the kernel's messages. */
export { callChanges, kernelMessages, netnsLabel, type KernelEntry, type NetnsNames } from './call-changes.js';
export { errnoName, errnoText } from './errno.js';
export { NetlinkDecodeError } from './netlink.js';
export { hostNetnsInode, netnsInodeOf } from './netns-inode.js';
export { helperChange, iptablesSubject } from './helpers.js';
export { withKernelMessage } from './error-line.js';
export { changeSummaryText } from './summary-text.js';
export { keepsStdin, nftChanges, type HelperRun } from './nft-helper.js';
export { parseNftScript, type NftCommand, type NftScript } from './nft-script.js';
