-- Crashed attempts (docs/delivery.md, "Crashed attempts"): an attempt that throws instead of
-- recording an outcome used to be rescheduled 30 s later for ever. Each queue row now counts the
-- crashes in a row since the delivery's last recorded outcome, so their retries back off and a
-- delivery whose attempts keep crashing ends (FAILED, or ABANDONED for a realtime webhook). The
-- count lives on the row, not in the stream: a crash is not an attempt and records no event.
alter table delivery_queue add column crashes integer not null default 0;
