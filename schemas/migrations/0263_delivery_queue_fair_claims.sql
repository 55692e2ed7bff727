-- Claims take turns between organizations (docs/delivery.md, "Claiming"): each queue row names the
-- organization of its delivery. Claims used to take the oldest due rows whoever they belonged to, so
-- one organization's backlog to a slow receiver (a valid receiver answering in 3 s, 64 deliveries,
-- 16 slots) held another organization's delivery back 12.9 s, and a backlog of thousands for as
-- many minutes.
alter table delivery_queue add column organization_id text not null default '';

-- Rows queued before this migration: their organization from the deliveries read model where it
-- has them; the rest share the empty organization until they leave the queue.
update delivery_queue q set organization_id = d.organization_id
  from deliveries d
 where d.id = q.delivery_id;

-- Walks the organizations with queued rows (one probe each) and each one's oldest due rows.
create index delivery_queue_organization_due on delivery_queue (organization_id, due_at);
