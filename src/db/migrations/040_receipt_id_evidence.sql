-- A receipt id of digits only reads as decimal and as hex: read across bases, it is a guess, made
-- only on a link that has shown it writes one number in two bases (docs/decisions/0036).

-- shown: the matches of a cross-base relation whose ids showed their bases (a hex letter on the
-- hex side). Rows counted before this migration may hold guesses: they show nothing.
ALTER TABLE link_id_matches ADD COLUMN IF NOT EXISTS shown bigint NOT NULL DEFAULT 0;

-- An early receipt's cross-base guesses, kept apart from the keys its id shows (number_keys): the
-- sweep matches by them only on links that have shown that relation.
ALTER TABLE early_receipts ADD COLUMN IF NOT EXISTS hex_to_decimal_key text,
                           ADD COLUMN IF NOT EXISTS decimal_to_hex_key text;
