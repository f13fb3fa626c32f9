-- Failed authentications per client address and minute, summed over every API process
-- (src/limits/auth-failures.ts). Unlogged: a count that a crash loses only lets a few more
-- attempts through, and it is written under a flood of bogus keys.
CREATE UNLOGGED TABLE auth_failures (
  address inet NOT NULL,
  window_start timestamptz NOT NULL,
  failures integer NOT NULL,
  PRIMARY KEY (address, window_start)
);
