/**
 * Generated from the OpenAPI document (GET /api/v1/openapi.json) by openapi-typescript: do not
 * edit. `npm run generate:client` rewrites it; test/integration/openapi-client.test.ts fails
 * while it differs from what the document gives.
 */
export interface paths {
  "/api/v1/sms": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Search the account's messages
     * @description Newest first, each item the Message as GET /api/v1/sms/{id} answers it, a page at a time: pass next_cursor back as cursor, with the same filters, until it is null (a page filtered by status or operator may be short, even empty, before the last). Every filter is optional and given once; since is inclusive, until exclusive; an unknown parameter is a validation error.
     */
    get: operations["searchSms"];
    put?: never;
    /**
     * Send one SMS
     * @description Validates the sender id, prices the text per segment, holds the charge on the prepaid balance and queues the message, in one transaction. 202 means accepted, priced and queued, not delivered. webhook_url, webhook_events and send_at (a scheduled send, held now, sent at send_at; the Message then carries send_at) are extensions here, as are smart_encoding (the Message then says what was sent, with smart_encoded), validity_period and deliver_between.
     */
    post: operations["sendSms"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sms/bulk": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send one text to many recipients
     * @description Priced as one send and accepted or rejected whole: one bad recipient, an unapproved sender or a balance that does not cover every recipient rejects it all, and nothing is sent. send_at (extension) schedules the whole send; the result then carries send_at.
     */
    post: operations["sendBulk"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sms/batch": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send many messages, each with its own recipient and text
     * @description Up to BULK_MAX_RECIPIENTS (10,000 by default) messages in one request: each item gives its own message, or the batch gives a template with {{name}} placeholders and each item its variables. Priced per message, and accepted or refused whole like a bulk send: one bad item (a missing variable, a text too long, a bad number), an unapproved sender or a balance that does not cover every message refuses it all, and nothing is sent. Answered like a bulk send: a bulk_id (for GET /api/v1/sms/bulk/{bulk_id} and the bulk_id filter), the total and an item per message, in request order.
     */
    post: operations["sendBatch"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sms/preview": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Price a send without sending it
     * @description Any send's body as it is: to a string (validated as POST /api/v1/sms), an array (as POST /api/v1/sms/bulk), or messages (as POST /api/v1/sms/batch; each item then shows its text). The same checks as the send (fields, segments, an approved from, send_at, a delivery window that opens within the validity), answered without writing anything: no message, hold, job or idempotency key. send_at and expires_at say when the send would go and expire; smart_encoding shows the charge with and without look-alike characters replaced, whenever replacing them would change a text.
     */
    post: operations["previewSms"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sms/{id}": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Retrieve one SMS
     * @description The message as it stands: poll it (not in a tight loop) and watch delivered_at, or use callbacks. Another account's id is not found.
     */
    get: operations["getSms"];
    put?: never;
    post?: never;
    /**
     * Cancel a message not yet dispatched
     * @description A message still enqueued (scheduled and not yet due, or waiting behind a carrier that is down) ends failed with operator_response CANCELLED and its hold is released, in one transaction. Cancelling a cancelled message answers 200 again. Kit conventions, though GET on this path is legacy.
     */
    delete: operations["cancelSms"];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sms/export.csv": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Export the messages of a search as CSV
     * @description Every message GET /api/v1/sms would list for the same filters (no limit, no cursor), in its order, as one RFC 4180 file, streamed. A query covering more than SEARCH_EXPORT_MAX_ROWS messages is a validation error on since: export a day or an hour at a time. An export cut short ends as a broken transfer, never as a file that looks whole.
     */
    get: operations["exportSms"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sms/bulk/{bulk_id}": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Retrieve a bulk send, its messages counted
     * @description charge is what was held at acceptance; status_counts counts the messages by status, delivered those with delivered_at; billing says where each message's charge stands now (held, captured, released), amounts in ten-thousandths. An id that is not a UUID, or another account's, is not found.
     */
    get: operations["getBulk"];
    put?: never;
    post?: never;
    /**
     * Cancel what is not yet dispatched of a bulk send
     * @description Every message of the bulk send still enqueued is cancelled and all their holds released, in one transaction; messages already dispatched or ended are left as they are. 409 when none of its messages is (or was) cancelled.
     */
    delete: operations["cancelBulk"];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/api-tokens": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List API keys
     * @description Every key of the account, revoked ones included, oldest first.
     */
    get: operations["listApiTokens"];
    put?: never;
    /** Create an API key */
    post: operations["createApiToken"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/api-tokens/{id}": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Revoke an API key
     * @description Immediate: the next request with the key is a 401. Revoking a revoked key is a 200.
     */
    delete: operations["revokeApiToken"];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/balance": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The prepaid balance */
    get: operations["getBalance"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/sender-ids": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The account's sender ids */
    get: operations["listSenderIds"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/inbound-numbers": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The account's inbound numbers
     * @description The short codes and numbers whose messages come to the account (the operator adds them). Each may be used as `from` in the account's sends, written as listed.
     */
    get: operations["listInboundNumbers"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/inbound": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The account's inbound messages
     * @description Newest first (by when the first part arrived), a page at a time: pass next_cursor back as cursor, with the same filters, until it is null. Every filter is optional and given once; since is inclusive, until exclusive; an unknown parameter is a validation error.
     */
    get: operations["listInboundMessages"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/inbound/{id}": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Retrieve an inbound message
     * @description An id that is not a UUID, or another account's message, is not found.
     */
    get: operations["getInboundMessage"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/opt-outs": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The account's opt-out list
     * @description Newest first, a page at a time (next_cursor, as GET /api/v1/sms). A send to a listed number reaches no carrier: its message is created failed with operator_response OPTED_OUT and a charge of 0.
     */
    get: operations["listOptOuts"];
    put?: never;
    /**
     * Put a number on the opt-out list
     * @description From then on no send of the account reaches it. 201 when this call listed it (a contact.opted_out callback, reason api), 200 when it was already listed (its entry unchanged, no callback).
     */
    post: operations["addOptOut"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/opt-outs/{number}": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Take a number off the opt-out list
     * @description Sends reach it again (a contact.opted_in callback, reason api). A number not on the list is not found.
     */
    delete: operations["removeOptOut"];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/webhook": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The account webhook */
    get: operations["getWebhook"];
    /**
     * Register or replace the account webhook
     * @description Replaces the URL, the event filter and the batch size together (no events: all; no batch_size: 1). Where events of sends without their own webhook_url go, from now on.
     */
    put: operations["putWebhook"];
    post?: never;
    /**
     * Remove the account webhook
     * @description Idempotent; the signing secret is kept (sends' own webhook_urls still use it).
     */
    delete: operations["deleteWebhook"];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/webhook/secret": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A new signing secret
     * @description Effective at once; the previous secret (if it was ever shown) signs alongside it for WEBHOOK_SECRET_GRACE_HOURS, as does each secret replaced within that time (the last five). Creates the first secret if there is none.
     */
    post: operations["rotateWebhookSecret"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/webhook/deliveries": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Recent callback events and their outcome
     * @description Newest first; an unknown parameter is a validation error, so a misspelt filter never returns everything. The next page: the same query with `before` set to the last event's id.
     */
    get: operations["listWebhookDeliveries"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/webhook/deliveries/redeliver": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send every event of a time range again
     * @description Every event created in [since, until), but those a 410 Gone ended and those bound for a URL a 410 stopped; more than 10000 (or than the hourly redelivery budget) is refused, to be split. The events count against the account's hourly redelivery budget: past it, 429 with Retry-After and nothing redelivered.
     */
    post: operations["redeliverWebhookEvents"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/webhook/deliveries/{event_id}/redeliver": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send one event again now
     * @description Whatever its state; it keeps its id. An unknown id or another account's event is not found. An event a 410 Gone ended (its own, or its URL's, which stops the account's callbacks to that URL until a PUT /api/v1/webhook sets it again) is never sent again: 409. It counts against the account's hourly redelivery budget (429 with Retry-After past it).
     */
    post: operations["redeliverWebhookEvent"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/healthz": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Liveness: the process answers */
    get: operations["healthz"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/readyz": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Readiness: the database reachable and migrated
     * @description The database is asked at most once a second per process, with a 1 s timeout. A carrier being down does not make the API port not ready (sends are queued).
     */
    get: operations["readyz"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  "/api/v1/openapi.json": {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * This document
     * @description OpenAPI 3.1, generated from the schemas the endpoints validate with. No key needed.
     */
    get: operations["getOpenApiDocument"];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export interface webhooks {
  messageEvent: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A callback: one event (or a batch of them), signed
     * @description A message event is posted to its send's webhook_url, else to the account webhook; message.received and the contact events go to the account webhook. Verify Shiri-Signature against the raw body (docs/api.md, Verifying a callback); deduplicate on the event id. An account webhook with a batch_size above 1 gets a JSON array of events instead, answered for all of them at once (docs/api.md, Callbacks in batches).
     */
    post: operations["messageEvent"];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export interface components {
  schemas: {
    /** @description One message to one recipient. */
    Message: {
      /**
       * Format: uuid
       * @description Message id; used in GET /api/v1/sms/{id}.
       */
      id: string;
      /** @description Recipient MSISDN, as sent (trimmed). */
      to: string;
      /** @description Body as sent. */
      message: string;
      /** @description The approved sender id the recipient saw (sent as `from`). */
      sender_id: string;
      /**
       * @description Derived from the recipient MSISDN; empty for a number no operator serves.
       * @enum {string}
       */
      operator: "econet" | "netone" | "telecel" | "";
      /**
       * @description Amount billed, in ten-thousandths of charge_currency: a JSON string here (an integer in bulk).
       * @example 450
       */
      charge: string;
      /**
       * @description Currency code of charge.
       * @example USD
       */
      charge_currency: string;
      /** @description Empty until dispatched; then the carrier's answer: ESME_ROK (accepted), DELIVRD, a final receipt's state with its error code (UNDELIV err:001, EXPIRED err:027; the state alone when the receipt gave no code: the state is the text before the first space), an SMPP status name (refused); or why it was never sent: UNROUTABLE, OPTED_OUT (the number is on the account's opt-out list: never sent, charge 0), CANCELLED, VALIDITY_EXPIRED, EXPIRED (not accepted within its validity_period), NO_ANSWER. */
      operator_response: string;
      /**
       * Format: date-time
       * @description When the service accepted the message.
       */
      received_at: string;
      /**
       * @description success: the carrier accepted it; not the delivery signal.
       * @enum {string}
       */
      status: "created" | "enqueued" | "processing" | "success" | "failed";
      /**
       * Format: date-time
       * @description When the message record was created.
       */
      created_at: string;
      /** @description null until the carrier confirms handset delivery: the only delivery signal. */
      delivered_at: string | null;
      /**
       * Format: date-time
       * @description Extension: when a scheduled message is due, or when the delivery window it was accepted outside opens; present on those messages only.
       */
      send_at?: string;
      /** @description Extension: the validity_period its send gave, in seconds; present on those messages only. */
      validity_period?: number;
      /**
       * Format: date-time
       * @description Extension: when it fails (EXPIRED) if no carrier has accepted it: present on a message with a validity_period, or delayed by a delivery window (then VALIDITY_EXPIRED without a validity_period).
       */
      expires_at?: string;
      /** @description Extension: the delivery window in force for it; present on those messages only. */
      deliver_between?: components["schemas"]["DeliveryWindowView"];
      /**
       * @description Extension: look-alike characters were replaced by GSM-7 ones (message is the text as sent and billed); present on those messages only.
       * @constant
       */
      smart_encoded?: true;
    };
    /** @description Local hours, end exclusive; an end before start spans midnight. */
    DeliveryWindowView: {
      start: string;
      end: string;
      time_zone: string;
    };
    DeliveryWindow: {
      /**
       * @description Local time the window opens (inclusive), HH:MM.
       * @example 08:00
       */
      start: string;
      /**
       * @description Local time the window closes (exclusive), HH:MM; before start, it spans midnight.
       * @example 08:00
       */
      end: string;
      /** @description An IANA time zone name; its daylight saving rules apply. */
      time_zone: string;
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_BAD_REQUEST: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_BAD_REQUEST";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    FieldError: {
      /** @description the field at fault: `to`, `to[3]`, `webhook_events`, or `body` */
      field: string;
      /** @description what is wrong with it, to show as is */
      description: string;
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_UNAUTHORIZED: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "UNAUTHORIZED";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_FORBIDDEN: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_FORBIDDEN";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_CONFLICT: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_CONFLICT";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_PAYLOAD_TOO_LARGE: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_PAYLOAD_TOO_LARGE";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_INSUFFICIENT_BALANCE: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_INSUFFICIENT_BALANCE";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_TOO_MANY_REQUESTS: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_TOO_MANY_REQUESTS";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_TOO_MANY_REQUESTS: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "TOO_MANY_REQUESTS";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_INTERNAL: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_INTERNAL";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_ERR_SERVICE_UNAVAILABLE: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "ERR_SERVICE_UNAVAILABLE";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    BulkResult: {
      /**
       * Format: uuid
       * @description Extension: the bulk send's id, for GET and DELETE /api/v1/sms/bulk/{bulk_id} and the bulk_id filter.
       */
      bulk_id: string;
      /** @description Recipients accepted. */
      total: number;
      /**
       * Format: int64
       * @description Total held for the send, ten-thousandths: an integer here.
       */
      charge: number;
      /** @description Currency of charge (named currency, not charge_currency). */
      currency: string;
      /**
       * Format: date-time
       * @description Extension: when a scheduled send is due, or its delivery window opens (UTC); present on those sends only.
       */
      send_at?: string;
      /**
       * Format: date-time
       * @description Extension: when its messages fail if no carrier has accepted them; present with a validity_period, or when a delivery window delayed the send.
       */
      expires_at?: string;
      /**
       * @description Extension: the text's look-alike characters were replaced (smart_encoding); the charge is for it.
       * @constant
       */
      smart_encoded?: true;
      /** @description One per recipient, in request order. */
      items: {
        /**
         * Format: uuid
         * @description Message id; behaves exactly like a single send's.
         */
        id: string;
        to: string;
        /**
         * @description failed for a number no operator serves (billed), or on the account's opt-out list (charge 0, never sent).
         * @enum {string}
         */
        status: "enqueued" | "failed";
        /** @description econet, netone, telecel, or empty when unroutable. */
        operator: string;
        /**
         * Format: int64
         * @description Held for this recipient, ten-thousandths: an integer here.
         */
        charge: number;
        charge_currency: string;
        /**
         * @description Extension, in a batch's answer: this message's look-alike characters were replaced.
         * @constant
         */
        smart_encoded?: true;
      }[];
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_BAD_REQUEST_VALIDATION_ERROR: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "BAD_REQUEST" | "VALIDATION_ERROR";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_FORBIDDEN: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "FORBIDDEN";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_CONFLICT: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "CONFLICT";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_PAYLOAD_TOO_LARGE: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "PAYLOAD_TOO_LARGE";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_UNPROCESSABLE_ENTITY: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "UNPROCESSABLE_ENTITY";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_INTERNAL_ERROR: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "INTERNAL_ERROR";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_SERVICE_UNAVAILABLE: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "SERVICE_UNAVAILABLE";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    BatchItem: {
      /**
       * @description MSISDN in international format (optional +, 3 to 20 digits)
       * @example +263771234567
       */
      to: string;
      /** @description This recipient's text; required without a template, refused with one. */
      message?: string;
      /**
       * @description Required with a template, refused without one.
       * @example {
       *       "name": "Rudo",
       *       "amount": "12.50"
       *     }
       */
      variables?: {
        [key: string]: string | number;
      };
    };
    /** @description The legacy error shape (`error.type`). */
    LegacyError_err_not_found: {
      /**
       * @description always the empty string
       * @constant
       */
      status: "";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        type: "err_not_found";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_VALIDATION_ERROR: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "VALIDATION_ERROR";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_NOT_FOUND: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "NOT_FOUND";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The Kit error shape (`error.code`). */
    KitError_BAD_REQUEST: {
      /** @constant */
      status: "error";
      message: string;
      error: {
        /**
         * @description the machine-readable code
         * @enum {string}
         */
        code: "BAD_REQUEST";
        description: string;
        validation_errors?: components["schemas"]["FieldError"][];
      };
    };
    /** @description The counts as they stand after the request. */
    BulkCancellation: {
      /** Format: uuid */
      bulk_id: string;
      /** @description The bulk send's messages. */
      total: number;
      /** @description Cancelled now or by an earlier request: their holds released. */
      cancelled: number;
      /** @description Already dispatched, or ended otherwise (an unroutable number stays billed). */
      not_cancelled: number;
    };
    /** @description An API key as returned on creation. */
    ApiKey: {
      /**
       * Format: uuid
       * @description Used to revoke the key.
       */
      id: string;
      name: string;
      /** @description The key secret: returned only here, only a SHA-256 hash is kept. */
      token: string;
      /** Format: uuid */
      account_id: string;
      /** Format: date-time */
      created_at: string;
      /** @description Extension: what the key may do; null for every scope. */
      scopes:
        | ("sms:send" | "sms:read" | "inbound:read" | "keys:manage" | "webhooks:manage" | "account:read")[]
        | null;
      /** @description Extension: the client addresses it may be used from; null for any. */
      allowed_ips: string[] | null;
      /** @description Extension: when it stops working; null for never. */
      expires_at: string | null;
    };
    /** @description The stored record, serialised as is (PascalCase). Only ID, Name, Active, CreatedAt and LastUsedAt are to be relied on. */
    ApiKeyRecord: {
      /**
       * Format: uuid
       * @description Key id; used in the revoke path.
       */
      ID: string;
      /** Format: date-time */
      CreatedAt: string;
      /** @description Unstable: not to be relied on. */
      UpdatedAt: string | null;
      /** @description Unstable: not to be relied on. */
      DeletedAt: string | null;
      Name: string;
      /** @description SHA-256 of the key. Internal: not to be built against. */
      TokenHash: string;
      /**
       * Format: uuid
       * @description Unstable: not to be relied on.
       */
      AccountId: string;
      /** @description false once revoked. */
      Active: boolean;
      /** @description null if never used; refreshed at most once a minute. */
      LastUsedAt: string | null;
      /** @description Extension: what the key may do; null for every scope. */
      Scopes:
        | ("sms:send" | "sms:read" | "inbound:read" | "keys:manage" | "webhooks:manage" | "account:read")[]
        | null;
      /** @description Extension: the client addresses it may be used from; null for any. */
      AllowedIps: string[] | null;
      /** @description Extension: when it stops working; null for never. */
      ExpiresAt: string | null;
    };
    Balance: {
      currency: string;
      /**
       * Format: int64
       * @description What new sends can spend, ten-thousandths.
       */
      available: number;
      /**
       * Format: int64
       * @description Held for messages not yet accepted or failed by a carrier.
       */
      held: number;
    };
    SenderId: {
      /** @description The sender id, as `from` takes it. */
      address: string;
      /**
       * @description verified marks a usable sender id.
       * @enum {string}
       */
      verification_status: "verified" | "pending" | "rejected";
    };
    InboundNumber: {
      /** @description As `from` takes it: a short code, or digits with the country code. */
      number: string;
      /** Format: date-time */
      created_at: string;
    };
    /** @description A message a handset sent to one of the account's inbound numbers. */
    InboundMessage: {
      /** Format: uuid */
      id: string;
      /** @description The handset's number, in international form: digits with the country code (+263…, 263… and 0… are one number). */
      from: string;
      /** @description The inbound number written to (a short code, or a number in international form). */
      to: string;
      /** @description The text, its parts joined. */
      message: string;
      /** @description The operator of the sender's number: econet, netone, telecel, or empty for none of them. */
      operator: string;
      /**
       * Format: date-time
       * @description When its first part arrived.
       */
      received_at: string;
      /** @description The parts joined. */
      parts: number;
      /** @description false when parts were still missing after the reassembly timeout: the text is what came. */
      complete: boolean;
      /**
       * @description How the handset encoded it (data_coding 0, 1, 3 or 8).
       * @enum {string}
       */
      encoding: "gsm7" | "ascii" | "latin1" | "ucs2";
      /** @description The keyword the whole text matched (an opt-out, opt-in or help word of the account, upper case), else null. */
      keyword: string | null;
    };
    /** @description A number on the account's opt-out list. */
    OptOut: {
      /** @description Digits with the country code (international form). */
      number: string;
      /**
       * Format: date-time
       * @description When it went on the list.
       */
      created_at: string;
      /**
       * @description A keyword the number sent, or this API.
       * @enum {string}
       */
      reason: "keyword" | "api";
      /** @description The keyword, when a keyword put it there. */
      keyword: string | null;
      /** @description The inbound message that carried the keyword (GET /api/v1/inbound/{id}). */
      inbound_message_id: string | null;
    };
    Webhook: {
      /** @description The account webhook; null when none is registered. */
      url: string | null;
      /** @description The event types it receives: all of them (the message events, message.received and the contact events) unless a PUT named some. */
      events: (
        | "message.enqueued"
        | "message.success"
        | "message.failed"
        | "message.delivered"
        | "message.undelivered"
        | "message.received"
        | "contact.opted_out"
        | "contact.opted_in"
      )[];
      /** @description Events one callback request carries at most (1: one each). */
      batch_size: number;
      signing_secret_set: boolean;
      secret_created_at: string | null;
      updated_at: string | null;
    };
    SavedWebhook: {
      /** @description The account webhook; null when none is registered. */
      url: string | null;
      /** @description The event types it receives: all of them (the message events, message.received and the contact events) unless a PUT named some. */
      events: (
        | "message.enqueued"
        | "message.success"
        | "message.failed"
        | "message.delivered"
        | "message.undelivered"
        | "message.received"
        | "contact.opted_out"
        | "contact.opted_in"
      )[];
      /** @description Events one callback request carries at most (1: one each). */
      batch_size: number;
      signing_secret_set: boolean;
      secret_created_at: string | null;
      updated_at: string | null;
      /** @description Only in the first answer that reveals the secret (a PUT that creates it); shown once. */
      signing_secret?: string;
    };
    SigningSecret: {
      /** @example whsec_… */
      signing_secret: string;
      /** Format: date-time */
      secret_created_at: string;
    };
    /** @description One callback event of the account and what became of it. */
    Delivery: {
      /**
       * Format: uuid
       * @description The event id (as in the callback).
       */
      id: string;
      /** @enum {string} */
      type:
        | "message.enqueued"
        | "message.success"
        | "message.failed"
        | "message.delivered"
        | "message.undelivered"
        | "message.received"
        | "contact.opted_out"
        | "contact.opted_in";
      /** @description The message the event is about: a sent one, or for message.received and a keyword's contact event the inbound one; null for a contact event made through the API. */
      message_id: string | null;
      /** @description Where it goes: fixed when the event was recorded. */
      url: string;
      /** @enum {string} */
      state: "pending" | "delivered" | "failed";
      attempts: number;
      /** @description The last attempt's HTTP status. */
      last_status: number | null;
      /** @description The last attempt's error, when it had no status. */
      last_error: string | null;
      /** Format: date-time */
      created_at: string;
      completed_at: string | null;
    };
    /** @description What /readyz checked (the API port leaves operators out). */
    ReadinessReport: {
      /** @enum {string} */
      status: "ready" | "not ready";
      checks: {
        database: {
          ok: boolean;
          /** @enum {string} */
          error?: "unreachable" | "timeout" | "error";
        };
        migrations?: {
          /** @description Every migration of this code is applied. */
          ok: boolean;
          applied: number;
          expected: number;
          missing: string[];
        };
        /** @description A worker's metrics port only: each operator's bind, ok when bound or standby. Absent on the API port. */
        operators?: {
          [key: string]: {
            ok: boolean;
            /** @enum {string} */
            state: "starting" | "bound" | "unbound" | "standby" | "stopped";
          };
        };
      };
    };
    CallbackBody: components["schemas"]["CallbackEvent"] | components["schemas"]["CallbackEvent"][];
    CallbackEvent:
      | components["schemas"]["MessageEvent"]
      | components["schemas"]["InboundMessageEvent"]
      | components["schemas"]["ContactEvent"];
    /** @description A sent message's status or delivery changed. */
    MessageEvent: {
      /**
       * Format: uuid
       * @description The event id: the same on every retry; deduplicate on it.
       */
      id: string;
      /** @enum {string} */
      type:
        | "message.enqueued"
        | "message.success"
        | "message.failed"
        | "message.delivered"
        | "message.undelivered";
      /**
       * Format: date-time
       * @description When the change happened.
       */
      created_at: string;
      data: components["schemas"]["Message"];
    };
    /** @description A handset's message to one of the account's inbound numbers. */
    InboundMessageEvent: {
      /**
       * Format: uuid
       * @description The event id: the same on every retry; deduplicate on it.
       */
      id: string;
      /** @constant */
      type: "message.received";
      /**
       * Format: date-time
       * @description When the change happened.
       */
      created_at: string;
      data: components["schemas"]["InboundMessage"];
    };
    /** @description A number went on or came off the account's opt-out list. */
    ContactEvent: {
      /**
       * Format: uuid
       * @description The event id: the same on every retry; deduplicate on it.
       */
      id: string;
      /** @enum {string} */
      type: "contact.opted_out" | "contact.opted_in";
      /**
       * Format: date-time
       * @description When the change happened.
       */
      created_at: string;
      data: {
        /** @description Digits with the country code (international form). */
        number: string;
        /**
         * Format: date-time
         * @description When the number went on (or came off) the list.
         */
        at: string;
        /**
         * @description A keyword the number sent, or this API.
         * @enum {string}
         */
        reason: "keyword" | "api";
        /** @description The keyword, when a keyword put it there. */
        keyword: string | null;
        /** @description The inbound message that carried the keyword (GET /api/v1/inbound/{id}). */
        inbound_message_id: string | null;
      };
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: {
    /** @description Seconds to wait before retrying (2). */
    "Retry-After": number;
    /** @description Seconds until the limit that refused the request lets it through (at least 1). */
    "Retry-After-Limit": number;
    /** @description The quota of the limit nearest its end (on a 429, the one that refused). */
    "RateLimit-Limit": number;
    /** @description What is left of that quota. */
    "RateLimit-Remaining": number;
    /** @description Seconds until that limit is whole again. */
    "RateLimit-Reset": number;
    /** @description Every limit that applied, as `<quota>;w=<window seconds>`, comma-separated. */
    "RateLimit-Policy": string;
  };
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  searchSms: {
    parameters: {
      query?: {
        status?: "created" | "enqueued" | "processing" | "success" | "failed";
        operator?: "econet" | "netone" | "telecel";
        /** @description MSISDN in international format (optional +, 3 to 20 digits) */
        to?: string;
        /** @description The messages of one bulk send (its data.bulk_id). */
        bulk_id?: string;
        /** @description Messages created at or after this instant (RFC 3339). */
        since?: string;
        /** @description Messages created before this instant (RFC 3339). */
        until?: string;
        /** @description Messages per page, 1 to 100 (default 50). */
        limit?: string;
        /** @description next_cursor of the previous page, with the same filters. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of messages. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            message: string;
            data: {
              items: components["schemas"]["Message"][];
              next_cursor: string | null;
            };
          };
        };
      };
      /** @description Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications; too many searches and exports in flight */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  sendSms: {
    parameters: {
      query?: never;
      header?: {
        /** @description Extension: the same key and body within 24 hours answers the original response, with no new message and no new charge; the same key with another body, or already used on another send endpoint, is a 409. */
        "Idempotency-Key"?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          /**
           * @description MSISDN in international format (optional +, 3 to 20 digits)
           * @example +263771234567
           */
          to: string;
          /** @description not blank; no control characters */
          from: string;
          /** @description not blank; no control characters */
          message: string;
          /**
           * Format: uri
           * @description an http or https URL
           */
          webhook_url?: string;
          webhook_events?: (
            | "message.enqueued"
            | "message.success"
            | "message.failed"
            | "message.delivered"
            | "message.undelivered"
          )[];
          /**
           * Format: date-time
           * @description Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the future and at most 30 days ahead. The charge is held at acceptance.
           * @example 2026-12-01T09:00:00+02:00
           */
          send_at?: string;
          /** @description Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the text as sent. Absent: the account's default (off unless set). */
          smart_encoding?: boolean;
          /** @description Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due (send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the service's MESSAGE_VALIDITY_HOURS. */
          validity_period?: number;
          /** @description Extension: the local hours in which the message may be sent. Accepted outside them, it waits for the window's next start (send_at then says when), never past its validity: a window that opens only after the validity ends is refused. null: no window, even when the account has a default one. Absent: the account's default window, if any. */
          deliver_between?: components["schemas"]["DeliveryWindow"] | null;
        };
      };
    };
    responses: {
      /** @description The Message, bare (no envelope). */
      202: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["Message"];
        };
      };
      /** @description malformed JSON body; unreadable request body; invalid request; unknown or unapproved sender id; invalid Idempotency-Key header */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_BAD_REQUEST"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_FORBIDDEN"];
        };
      };
      /** @description idempotency key reused */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_CONFLICT"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description insufficient balance */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_INSUFFICIENT_BALANCE"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json":
            | components["schemas"]["LegacyError_ERR_TOO_MANY_REQUESTS"]
            | components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_INTERNAL"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  sendBulk: {
    parameters: {
      query?: never;
      header?: {
        /** @description Extension: the same key and body within 24 hours answers the original response, with no new message and no new charge; the same key with another body, or already used on another send endpoint, is a 409. */
        "Idempotency-Key"?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          to: string[];
          /** @description not blank; no control characters */
          from: string;
          /** @description not blank; no control characters */
          message: string;
          /**
           * Format: uri
           * @description an http or https URL
           */
          webhook_url?: string;
          webhook_events?: (
            | "message.enqueued"
            | "message.success"
            | "message.failed"
            | "message.delivered"
            | "message.undelivered"
          )[];
          /**
           * Format: date-time
           * @description Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the future and at most 30 days ahead. The charge is held at acceptance.
           * @example 2026-12-01T09:00:00+02:00
           */
          send_at?: string;
          /** @description Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the text as sent. Absent: the account's default (off unless set). */
          smart_encoding?: boolean;
          /** @description Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due (send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the service's MESSAGE_VALIDITY_HOURS. */
          validity_period?: number;
          /** @description Extension: the local hours in which the message may be sent. Accepted outside them, it waits for the window's next start (send_at then says when), never past its validity: a window that opens only after the validity ends is refused. null: no window, even when the account has a default one. Absent: the account's default window, if any. */
          deliver_between?: components["schemas"]["DeliveryWindow"] | null;
        };
      };
    };
    responses: {
      /** @description Accepted: one message per recipient. */
      202: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "bulk sms enqueued";
            data: components["schemas"]["BulkResult"];
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed; invalid Idempotency-Key header */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description idempotency key reused */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_CONFLICT"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description insufficient balance */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNPROCESSABLE_ENTITY"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  sendBatch: {
    parameters: {
      query?: never;
      header?: {
        /** @description Extension: the same key and body within 24 hours answers the original response, with no new message and no new charge; the same key with another body, or already used on another send endpoint, is a 409. */
        "Idempotency-Key"?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          /** @description not blank; no control characters */
          from: string;
          /**
           * @description A text with {{name}} placeholders (letters, digits and _; spaces inside the braces allowed), filled per item from its variables. Without it, each item gives its own message.
           * @example Hi {{name}}, your balance is {{amount}}.
           */
          template?: string;
          messages: components["schemas"]["BatchItem"][];
          /**
           * Format: uri
           * @description an http or https URL
           */
          webhook_url?: string;
          webhook_events?: (
            | "message.enqueued"
            | "message.success"
            | "message.failed"
            | "message.delivered"
            | "message.undelivered"
          )[];
          /**
           * Format: date-time
           * @description Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the future and at most 30 days ahead. The charge is held at acceptance.
           * @example 2026-12-01T09:00:00+02:00
           */
          send_at?: string;
          /** @description Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the text as sent. Absent: the account's default (off unless set). */
          smart_encoding?: boolean;
          /** @description Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due (send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the service's MESSAGE_VALIDITY_HOURS. */
          validity_period?: number;
          /** @description Extension: the local hours in which the message may be sent. Accepted outside them, it waits for the window's next start (send_at then says when), never past its validity: a window that opens only after the validity ends is refused. null: no window, even when the account has a default one. Absent: the account's default window, if any. */
          deliver_between?: components["schemas"]["DeliveryWindow"] | null;
        };
      };
    };
    responses: {
      /** @description Accepted: one message per item, in request order. */
      202: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "batch sms enqueued";
            data: components["schemas"]["BulkResult"];
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed; invalid Idempotency-Key header */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description idempotency key reused */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_CONFLICT"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description insufficient balance */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNPROCESSABLE_ENTITY"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  previewSms: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json":
          | {
              /**
               * @description MSISDN in international format (optional +, 3 to 20 digits)
               * @example +263771234567
               */
              to: string;
              /** @description not blank; no control characters */
              from: string;
              /** @description not blank; no control characters */
              message: string;
              /**
               * Format: uri
               * @description an http or https URL
               */
              webhook_url?: string;
              webhook_events?: (
                | "message.enqueued"
                | "message.success"
                | "message.failed"
                | "message.delivered"
                | "message.undelivered"
              )[];
              /**
               * Format: date-time
               * @description Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the future and at most 30 days ahead. The charge is held at acceptance.
               * @example 2026-12-01T09:00:00+02:00
               */
              send_at?: string;
              /** @description Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the text as sent. Absent: the account's default (off unless set). */
              smart_encoding?: boolean;
              /** @description Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due (send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the service's MESSAGE_VALIDITY_HOURS. */
              validity_period?: number;
              /** @description Extension: the local hours in which the message may be sent. Accepted outside them, it waits for the window's next start (send_at then says when), never past its validity: a window that opens only after the validity ends is refused. null: no window, even when the account has a default one. Absent: the account's default window, if any. */
              deliver_between?: components["schemas"]["DeliveryWindow"] | null;
            }
          | {
              to: string[];
              /** @description not blank; no control characters */
              from: string;
              /** @description not blank; no control characters */
              message: string;
              /**
               * Format: uri
               * @description an http or https URL
               */
              webhook_url?: string;
              webhook_events?: (
                | "message.enqueued"
                | "message.success"
                | "message.failed"
                | "message.delivered"
                | "message.undelivered"
              )[];
              /**
               * Format: date-time
               * @description Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the future and at most 30 days ahead. The charge is held at acceptance.
               * @example 2026-12-01T09:00:00+02:00
               */
              send_at?: string;
              /** @description Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the text as sent. Absent: the account's default (off unless set). */
              smart_encoding?: boolean;
              /** @description Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due (send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the service's MESSAGE_VALIDITY_HOURS. */
              validity_period?: number;
              /** @description Extension: the local hours in which the message may be sent. Accepted outside them, it waits for the window's next start (send_at then says when), never past its validity: a window that opens only after the validity ends is refused. null: no window, even when the account has a default one. Absent: the account's default window, if any. */
              deliver_between?: components["schemas"]["DeliveryWindow"] | null;
            }
          | {
              /** @description not blank; no control characters */
              from: string;
              /**
               * @description A text with {{name}} placeholders (letters, digits and _; spaces inside the braces allowed), filled per item from its variables. Without it, each item gives its own message.
               * @example Hi {{name}}, your balance is {{amount}}.
               */
              template?: string;
              messages: components["schemas"]["BatchItem"][];
              /**
               * Format: uri
               * @description an http or https URL
               */
              webhook_url?: string;
              webhook_events?: (
                | "message.enqueued"
                | "message.success"
                | "message.failed"
                | "message.delivered"
                | "message.undelivered"
              )[];
              /**
               * Format: date-time
               * @description Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the future and at most 30 days ahead. The charge is held at acceptance.
               * @example 2026-12-01T09:00:00+02:00
               */
              send_at?: string;
              /** @description Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the text as sent. Absent: the account's default (off unless set). */
              smart_encoding?: boolean;
              /** @description Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due (send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the service's MESSAGE_VALIDITY_HOURS. */
              validity_period?: number;
              /** @description Extension: the local hours in which the message may be sent. Accepted outside them, it waits for the window's next start (send_at then says when), never past its validity: a window that opens only after the validity ends is refused. null: no window, even when the account has a default one. Absent: the account's default window, if any. */
              deliver_between?: components["schemas"]["DeliveryWindow"] | null;
            };
      };
    };
    responses: {
      /** @description Per recipient and in total. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            message: string;
            data: {
              total: number;
              charge: number;
              currency: string;
              /**
               * @description For a batch: ucs2 when any message would be.
               * @enum {string}
               */
              encoding: "gsm7" | "ucs2";
              /** @description For a batch: the most segments any message would have. */
              segments: number;
              available: number;
              sufficient_balance: boolean;
              /**
               * Format: date-time
               * @description When the send would go: its send_at, or its delivery window's next opening; absent: at once.
               */
              send_at?: string;
              /**
               * Format: date-time
               * @description When its messages would fail if no carrier accepted them (a validity_period, a window).
               */
              expires_at?: string;
              /** @description Present when replacing look-alike characters (docs/smart-encoding.md) would make a text GSM-7: both prices, and which one the send would be charged. */
              smart_encoding?: {
                /** @description The send would replace them (asked for, or the account's default). */
                applied: boolean;
                /** @description The total for the text(s) as written. */
                charge_as_written: number;
                /** @description The total with the look-alikes replaced. */
                charge_smart_encoded: number;
                /** @description A single or bulk send's text with its look-alikes replaced. */
                message?: string;
              };
              items: {
                to: string;
                operator: string;
                /** @enum {string} */
                encoding: "gsm7" | "ucs2";
                segments: number;
                charge: number;
                charge_currency: string;
                /** @enum {string} */
                status: "enqueued" | "failed";
                /** @description A batch's item: its text as it would be sent. */
                message?: string;
                /**
                 * @description A batch's item: its look-alike characters would be replaced.
                 * @constant
                 */
                smart_encoded?: true;
              }[];
            };
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  getSms: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The id from a send or a bulk item. */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The Message. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "request successful";
            data: components["schemas"]["Message"];
          };
        };
      };
      /** @description invalid sms id */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_BAD_REQUEST"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_err_not_found"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json":
            | components["schemas"]["LegacyError_ERR_TOO_MANY_REQUESTS"]
            | components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_INTERNAL"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["LegacyError_ERR_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  cancelSms: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The id from a send or a bulk item. */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The Message as it now is: failed, CANCELLED. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "sms cancelled";
            data: components["schemas"]["Message"];
          };
        };
      };
      /** @description invalid sms id */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description already dispatched */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_CONFLICT"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  exportSms: {
    parameters: {
      query?: {
        status?: "created" | "enqueued" | "processing" | "success" | "failed";
        operator?: "econet" | "netone" | "telecel";
        /** @description MSISDN in international format (optional +, 3 to 20 digits) */
        to?: string;
        /** @description The messages of one bulk send (its data.bulk_id). */
        bulk_id?: string;
        /** @description Messages created at or after this instant (RFC 3339). */
        since?: string;
        /** @description Messages created before this instant (RFC 3339). */
        until?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The CSV file. */
      200: {
        headers: {
          "Content-Disposition": 'attachment; filename="messages.csv"';
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "text/csv": string;
        };
      };
      /** @description Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications; too many searches and exports in flight */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  getBulk: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description data.bulk_id of the bulk send. */
        bulk_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The bulk send. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            message: string;
            data: {
              /** Format: uuid */
              bulk_id: string;
              sender_id: string;
              /** Format: date-time */
              created_at: string;
              total: number;
              charge: number;
              currency: string;
              status_counts: {
                created: number;
                enqueued: number;
                processing: number;
                success: number;
                failed: number;
              };
              delivered: number;
              billing: {
                held: number;
                captured: number;
                released: number;
              };
            };
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  cancelBulk: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description data.bulk_id of the bulk send. */
        bulk_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The bulk send's counts after the request. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "bulk sms cancelled";
            data: components["schemas"]["BulkCancellation"];
          };
        };
      };
      /** @description invalid bulk id */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description already dispatched */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_CONFLICT"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  listApiTokens: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The keys (message is empty). */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "";
            data: components["schemas"]["ApiKeyRecord"][];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  createApiToken: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          /** @description not blank; no control characters */
          name: string;
          /** @description Extension: what the key may do; every scope when absent. */
          scopes?: (
            | "sms:send"
            | "sms:read"
            | "inbound:read"
            | "keys:manage"
            | "webhooks:manage"
            | "account:read"
          )[];
          /** @description Extension: the client addresses the key may be used from; any when absent. */
          allowed_ips?: string[];
          /**
           * Format: date-time
           * @description Extension: when the key stops working (then a 401); never when absent.
           */
          expires_at?: string;
        };
      };
    };
    responses: {
      /** @description The key, with its secret (shown once). */
      201: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "api token created: save the token now, it is returned only once";
            data: components["schemas"]["ApiKey"];
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  revokeApiToken: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The key's ID. */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Revoked (no data). */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "api token revoked";
          };
        };
      };
      /** @description invalid token id */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  getBalance: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The balance. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "request successful";
            data: components["schemas"]["Balance"];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  listSenderIds: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The sender ids. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "request successful";
            data: components["schemas"]["SenderId"][];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  listInboundNumbers: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The inbound numbers. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "request successful";
            data: components["schemas"]["InboundNumber"][];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  listInboundMessages: {
    parameters: {
      query?: {
        /** @description Messages from this number (international form: digits with the country code (+263…, 263… and 0… are one number)). */
        from?: string;
        /** @description Messages to this inbound number. */
        to?: string;
        /** @description Messages received at or after this instant (RFC 3339). */
        since?: string;
        /** @description Messages received before this instant (RFC 3339). */
        until?: string;
        /** @description Messages per page, 1 to 100 (default 50). */
        limit?: string;
        /** @description next_cursor of the previous page, with the same filters. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of inbound messages. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "";
            data: {
              items: components["schemas"]["InboundMessage"][];
              /** @description Pass as cursor for the next page; null on the last. */
              next_cursor: string | null;
            };
          };
        };
      };
      /** @description Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  getInboundMessage: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The inbound message's id. */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The inbound message. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "request successful";
            data: components["schemas"]["InboundMessage"];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  listOptOuts: {
    parameters: {
      query?: {
        /** @description That number's entry alone (any of its forms). */
        number?: string;
        /** @description Entries per page, 1 to 100 (default 50). */
        limit?: string;
        /** @description next_cursor of the previous page, with the same number filter. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of the list. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "";
            data: {
              items: components["schemas"]["OptOut"][];
              /** @description Pass as cursor for the next page; null on the last. */
              next_cursor: string | null;
            };
          };
        };
      };
      /** @description Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  addOptOut: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          /**
           * @description MSISDN in international format (optional +, 3 to 20 digits)
           * @example +263771234567
           */
          number: string;
        };
      };
    };
    responses: {
      /** @description Already listed. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "number already opted out";
            data: components["schemas"]["OptOut"];
          };
        };
      };
      /** @description Listed now. */
      201: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "number opted out";
            data: components["schemas"]["OptOut"];
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  removeOptOut: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The number, in any of its forms (+263…, 263…, 0…). */
        number: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Taken off (no data). */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "number opted in";
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  getWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The webhook. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "request successful";
            data: components["schemas"]["Webhook"];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  putWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          /**
           * Format: uri
           * @description an http or https URL
           */
          url: string;
          events?: (
            | "message.enqueued"
            | "message.success"
            | "message.failed"
            | "message.delivered"
            | "message.undelivered"
            | "message.received"
            | "contact.opted_out"
            | "contact.opted_in"
          )[];
          /** @description Events one callback request carries at most, 1 to 100 (default 1). Above 1, the events bound for this webhook go together: the body is a JSON array of events and the Shiri-Event-Count header replaces Shiri-Event-Id and Shiri-Event-Type. */
          batch_size?: number;
        };
      };
    };
    responses: {
      /** @description Saved; the first answer carries the signing secret. */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @enum {string} */
            message: "webhook saved" | "webhook saved: save the signing secret now, it is returned only once";
            data: components["schemas"]["SavedWebhook"];
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  deleteWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted (no data). */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "webhook deleted";
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  rotateWebhookSecret: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The new secret, shown once. */
      201: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "signing secret created: save the signing secret now, it is returned only once";
            data: components["schemas"]["SigningSecret"];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  listWebhookDeliveries: {
    parameters: {
      query?: {
        /** @description 20 when omitted */
        limit?: number;
        state?: "pending" | "delivered" | "failed";
        /** @description events created then or later */
        since?: string;
        /** @description the next page: events older than this one, the last of the previous page */
        before?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The events (message is empty). */
      200: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "";
            data: components["schemas"]["Delivery"][];
          };
        };
      };
      /** @description Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  redeliverWebhookEvents: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": {
          /**
           * Format: date-time
           * @description RFC 3339, with Z or an offset
           */
          since: string;
          /**
           * Format: date-time
           * @description RFC 3339, with Z or an offset
           */
          until: string;
        };
      };
    };
    responses: {
      /** @description How many events went back to the outbox. */
      202: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "redelivery scheduled";
            data: {
              redelivered: number;
            };
          };
        };
      };
      /** @description malformed JSON body; unreadable request body; Validation failed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_BAD_REQUEST_VALIDATION_ERROR"];
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description request body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_PAYLOAD_TOO_LARGE"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  redeliverWebhookEvent: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        event_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Back in the outbox. */
      202: {
        headers: {
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "success";
            /** @constant */
            message: "redelivery scheduled";
            data: components["schemas"]["Delivery"];
          };
        };
      };
      /** @description missing authentication */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_UNAUTHORIZED"];
        };
      };
      /** @description forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_FORBIDDEN"];
        };
      };
      /** @description not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_NOT_FOUND"];
        };
      };
      /** @description refused by the receiver */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_CONFLICT"];
        };
      };
      /** @description too many requests; too many failed authentications */
      429: {
        headers: {
          "Retry-After": components["headers"]["Retry-After-Limit"];
          "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
          "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
          "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
          "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_TOO_MANY_REQUESTS"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  healthz: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Alive. */
      200: {
        headers: {
          "Cache-Control": "no-store";
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            status: "ok";
            /** @description Seconds since the process started. */
            uptime_seconds: number;
          };
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  readyz: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Ready. */
      200: {
        headers: {
          "Cache-Control": "no-store";
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["ReadinessReport"];
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description Not ready: take the process out of the balancer and ask again after Retry-After. */
      503: {
        headers: {
          "Cache-Control": "no-store";
          "Retry-After": "2";
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["ReadinessReport"];
        };
      };
    };
  };
  getOpenApiDocument: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The OpenAPI document. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": {
            /** @constant */
            openapi: "3.1.0";
          } & {
            [key: string]: unknown;
          };
        };
      };
      /** @description internal error */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_INTERNAL_ERROR"];
        };
      };
      /** @description service unavailable, try again shortly */
      503: {
        headers: {
          "Retry-After": components["headers"]["Retry-After"];
          [name: string]: unknown;
        };
        content: {
          "application/json": components["schemas"]["KitError_SERVICE_UNAVAILABLE"];
        };
      };
    };
  };
  messageEvent: {
    parameters: {
      query?: never;
      header: {
        /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the signing secret>`; one v1 per secret during a rotation's grace period, the new one first. */
        "Shiri-Signature": string;
        /** @description The event id, as in the body; not on a batch. */
        "Shiri-Event-Id"?: string;
        /** @description The event type, as in the body; not on a batch. */
        "Shiri-Event-Type"?:
          | "message.enqueued"
          | "message.success"
          | "message.failed"
          | "message.delivered"
          | "message.undelivered"
          | "message.received"
          | "contact.opted_out"
          | "contact.opted_in";
        /** @description On a batch only: how many events the array holds. */
        "Shiri-Event-Count"?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        "application/json": components["schemas"]["CallbackBody"];
      };
    };
    responses: {
      /** @description Gone: the event is failed for good, never retried. */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Received: the event is delivered. */
      "2XX": {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Anything else (or no answer within 5 s): retried with back-off. */
      default: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
}
