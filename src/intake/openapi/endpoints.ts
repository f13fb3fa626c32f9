import { getBalanceEndpoint, getSenderIdsEndpoint } from "../routes/account.ts";
import { createTokenEndpoint, listTokensEndpoint, revokeTokenEndpoint } from "../routes/api-tokens.ts";
import { cancelBulkEndpoint, cancelSmsEndpoint } from "../routes/cancel-sms.ts";
import { exportSmsEndpoint } from "../routes/export-sms.ts";
import { getBulkEndpoint } from "../routes/get-bulk.ts";
import { getSmsEndpoint } from "../routes/get-sms.ts";
import { healthzEndpoint, readyzEndpoint } from "../routes/health.ts";
import { getInboundEndpoint, getInboundNumbersEndpoint, searchInboundEndpoint } from "../routes/inbound.ts";
import { openApiEndpoint } from "../routes/openapi.ts";
import { addOptOutEndpoint, listOptOutsEndpoint, removeOptOutEndpoint } from "../routes/opt-outs.ts";
import { previewSmsEndpoint } from "../routes/preview-sms.ts";
import { searchSmsEndpoint } from "../routes/search-sms.ts";
import { sendBatchEndpoint } from "../routes/send-batch.ts";
import { sendBulkEndpoint } from "../routes/send-bulk.ts";
import { sendSmsEndpoint } from "../routes/send-sms.ts";
import {
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  putWebhookEndpoint,
  rotateWebhookSecretEndpoint,
} from "../routes/webhook.ts";
import {
  getDeliveriesEndpoint,
  redeliverManyEndpoint,
  redeliverOneEndpoint,
} from "../routes/webhook-deliveries.ts";
import type { Endpoint } from "./endpoint.ts";

/**
 * Every endpoint of the API, in the order the document lists them. A route registered in
 * app.ts needs its entry here (declared beside its handler); test/integration/openapi.test.ts
 * fails on a route without one, or an entry without a route.
 */
export const ENDPOINTS: readonly Endpoint[] = [
  sendSmsEndpoint,
  sendBulkEndpoint,
  sendBatchEndpoint,
  previewSmsEndpoint,
  getSmsEndpoint,
  searchSmsEndpoint,
  exportSmsEndpoint,
  getBulkEndpoint,
  cancelSmsEndpoint,
  cancelBulkEndpoint,
  createTokenEndpoint,
  listTokensEndpoint,
  revokeTokenEndpoint,
  getBalanceEndpoint,
  getSenderIdsEndpoint,
  getInboundNumbersEndpoint,
  searchInboundEndpoint,
  getInboundEndpoint,
  listOptOutsEndpoint,
  addOptOutEndpoint,
  removeOptOutEndpoint,
  getWebhookEndpoint,
  putWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecretEndpoint,
  getDeliveriesEndpoint,
  redeliverManyEndpoint,
  redeliverOneEndpoint,
  healthzEndpoint,
  readyzEndpoint,
  openApiEndpoint,
];
