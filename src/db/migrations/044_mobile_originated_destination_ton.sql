-- The destination's type of number as the SMSC marked it: a long message's parts are joined from
-- these rows, and an address written as nine national digits (TON 2) is the Zimbabwean number
-- that inbound_numbers keeps in international form (src/inbound/store-parts.ts). Null for rows
-- stored before it (read as unmarked). Nullable with no default: added without rewriting the table.
ALTER TABLE mobile_originated ADD COLUMN IF NOT EXISTS dest_addr_ton smallint;
