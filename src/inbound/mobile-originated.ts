import type { Queryable } from "../db/pool.ts";
import { resolveOperator } from "../domain/numbers.ts";
import type { DeliverSm } from "../smpp/session.ts";

/**
 * Keeps a mobile-originated message (a deliver_sm that is not a receipt) so that it is not lost:
 * what is done with it is for later. Stored before the deliver_sm is acknowledged, so a failed
 * write makes the SMSC send it again. Its operator is the sender's number's ("" when the number
 * is none of them), its link the one it came over.
 */
export async function storeMobileOriginated(db: Queryable, link: string, pdu: DeliverSm): Promise<void> {
  await db.query(
    `INSERT INTO mobile_originated
       (operator, link, source_addr, source_addr_ton, source_addr_npi, destination_addr, esm_class, data_coding, body, udh)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      resolveOperator(pdu.source_addr) ?? "",
      link,
      pdu.source_addr,
      pdu.source_addr_ton,
      pdu.source_addr_npi,
      pdu.destination_addr,
      pdu.esm_class,
      pdu.data_coding,
      pdu.short_message,
      pdu.udh.length > 0 ? Buffer.concat(pdu.udh.map((ie) => ie)) : null,
    ],
  );
}
