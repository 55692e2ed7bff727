-- The x402 payment ledger's read model (docs/payments.md, "Ledger"): one row per transfer
-- authorization, from PaymentVerified to its outcome.
create table payments (
  id text primary key,
  payer text not null,
  operation text not null,
  amount numeric(78, 0) not null,
  asset text not null,
  network text not null,
  outcome text not null check (outcome in ('verified', 'settled', 'settlement_failed', 'not_charged')),
  transaction text,
  reason text,
  verified_at timestamptz not null,
  updated_at timestamptz not null
);

create index payments_verified_at on payments (verified_at, id);
