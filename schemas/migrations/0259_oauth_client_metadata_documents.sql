-- OAuth Client ID Metadata Documents (docs/agents.md): a client whose client_id is the https URL of
-- a JSON document it publishes. Its row is written when a human first approves it (grants and codes
-- reference it) and refreshed from the document each time earshot fetches it again; the document,
-- not this row, decides at every authorization. Registered (RFC 7591) clients keep ids `oc_…`.
alter table oauth_clients
  add column kind text not null default 'registered'
    check (kind in ('registered', 'metadata_document')),
  add column client_uri text,
  add column logo_uri text,
  add column metadata_fetched_at timestamptz,
  add constraint oauth_clients_metadata_document_public
    check (kind = 'registered' or (token_endpoint_auth_method = 'none' and id like 'https://%'));
