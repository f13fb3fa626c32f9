import { econet } from "./econet.ts";
import { netone } from "./netone.ts";
import { telecel } from "./telecel.ts";
import type { CarrierAdapter, Operator } from "./types.ts";

export type { CarrierAdapter, Operator, SmppSettings, SmscIdFormat } from "./types.ts";
export { CONCATENATIONS, GSM_DATA_CODINGS, OPERATORS, RECEIPT_SCOPES, SMSC_ID_FORMATS } from "./types.ts";

/** Zimbabwe's country calling code; every routable number starts with it. */
export const COUNTRY_CODE = "263";

export const CARRIERS: Readonly<Record<Operator, CarrierAdapter>> = { econet, netone, telecel };
