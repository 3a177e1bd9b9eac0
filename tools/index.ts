// THE registry: MCP and REST both loop over it.
import type { ToolDefinition } from './types.js';
import { integrationList } from './integration-list.js';
import { groupList } from './group-list.js';
import { integrationSchema } from './integration-schema.js';
import { triggerTool } from './trigger-tool.js';
import { schedulePostTool } from './schedule-post-tool.js';
import { generateImageTool, generateVideoOptions, generateVideoTool, generationList, generationStatus, videoFunctionTool } from './generation.js';
import { isConnected } from './is-connected.js';
import { deleteIntegration } from './delete-integration.js';
import { socialConnectUrl } from './social-connect-url.js';
import { integrationSettings } from './integration-settings.js';
import { findSlot } from './find-slot.js';
import { timeZoneTool } from './time-zone.js';
import { postList } from './post-list.js';
import { createPost } from './create-post.js';
import { deletePost } from './delete-post.js';
import { deletePostGroup } from './delete-post-group.js';
import { missingContent } from './missing-content.js';
import { setReleaseId } from './set-release-id.js';
import { changePostStatus } from './change-post-status.js';
import { channelAnalytics } from './channel-analytics.js';
import { postAnalytics } from './post-analytics.js';
import { notificationList } from './notification-list.js';
import { connectChannel } from './connect-channel.js';
import { setPostingTimes } from './set-posting-times.js';
import { uploadMedia } from './upload-media.js';
import { uploadFromUrlTool } from './upload-from-url.js';
import { mediaList } from './media-list.js';
import { deleteMedia } from './delete-media.js';
import { channelAccounts, chooseChannelAccount } from './channel-accounts.js';
import { validatePost, validatePostTool } from './validate-post.js';
import { webhookTools } from './webhooks.js';
import { updatePost } from './update-post.js';
import { analyticsOverview } from './analytics-overview.js';
import { exportChannelAnalytics, exportPostAnalytics } from './analytics-export.js';
import { bestTimesTool } from './best-times.js';
import { commentTools } from './comments.js';
import { keyTools } from './api-keys.js';
import { auditList } from './audit-list.js';
import { previewLinkTools } from './preview-links.js';
import { importPostsTool } from './import-posts.js';
import { postSetTools } from './post-sets.js';
import { signatureTools } from './signatures.js';
import { feedTools } from './feeds.js';
import { recurringPostTools } from './recurring-posts.js';
import { approvalSettingsTool, approvePostTool, rejectPostTool, setApprovalSettingsTool } from './approve-post.js';

export const tools: readonly ToolDefinition[] = [
  integrationList,
  groupList,
  integrationSchema,
  triggerTool,
  schedulePostTool,
  validatePostTool,
  importPostsTool,
  generateImageTool,
  generateVideoOptions,
  videoFunctionTool,
  generateVideoTool,
  postList,
  findSlot,
  timeZoneTool,
  channelAnalytics,
  analyticsOverview,
  postAnalytics,
  exportChannelAnalytics,
  exportPostAnalytics,
  bestTimesTool,
  notificationList,
  uploadFromUrlTool,
  mediaList,
  isConnected,
  deleteIntegration,
  socialConnectUrl,
  integrationSettings,
  createPost,
  validatePost,
  deletePost,
  deletePostGroup,
  missingContent,
  setReleaseId,
  changePostStatus,
  connectChannel,
  setPostingTimes,
  uploadMedia,
  deleteMedia,
  channelAccounts,
  chooseChannelAccount,
  generationList,
  generationStatus,
  ...webhookTools,
  updatePost,
  approvePostTool,
  rejectPostTool,
  approvalSettingsTool,
  setApprovalSettingsTool,
  ...commentTools,
  ...keyTools,
  auditList,
  ...postSetTools,
  ...signatureTools,
  ...feedTools,
  ...recurringPostTools,
  ...previewLinkTools,
] as unknown as readonly ToolDefinition[];

export const toolByName = new Map(tools.map((tool) => [tool.name, tool]));
