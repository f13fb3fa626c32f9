import { expect } from "vitest";
import { smppEnv } from "./dispatch.ts";
import { type ForeignSmsc, type ForeignSmscOptions, startForeignSmsc } from "./foreign-smsc.ts";
import { call, startTestService, type TestAccount, type TestService } from "./service.ts";

export interface MessageState {
  status: string;
  operator_response: string;
  delivered: boolean;
}

/** Shiri (one `all` process) with its econet link bound to a foreign SMSC, and an account. */
export interface ForeignCarrier {
  smsc: ForeignSmsc;
  t: TestService;
  acct: TestAccount;
  /** A single send from SHIRI to `to` (international, with its +): the message's id. */
  send(to: string, message: string): Promise<string>;
  state(id: string): Promise<MessageState | undefined>;
  stop(): Promise<void>;
}

export async function startForeignCarrier(options: ForeignSmscOptions): Promise<ForeignCarrier> {
  const smsc = startForeignSmsc(options);
  const port = await smsc.start();
  const t = await startTestService(smppEnv({ econet: port }), "all");
  const acct = await t.account({ balance: 1_000_000_000 });
  return {
    smsc,
    t,
    acct,
    async send(to, message) {
      const res = await call(t.base, "POST", "/api/v1/sms", {
        headers: acct.headers,
        body: { to, from: "SHIRI", message },
      });
      expect(res.status).toBe(202);
      return (res.body as { id: string }).id;
    },
    async state(id) {
      const { rows } = await t.service.pool.query<MessageState>(
        "SELECT status, operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
        [id],
      );
      return rows[0];
    },
    async stop() {
      await t.stop();
      await smsc.stop();
    },
  };
}
