import type { Logger } from 'pino';
import { findEntity } from '../../../projections/entities/queries.ts';
import { episodesPublishedBetween } from '../../../projections/episodes/queries.ts';
import type { EntityRef } from '../../alerts/alert.ts';
import { parseAlertPatch } from '../../alerts/input.ts';
import { entitiesReadModel } from '../../alerts/service.ts';
import type { AlertKind, FilterSpeakerRole } from '../../alerts/values.ts';
import { episodeLanguage } from '../../catalog/episode-language.ts';
import type { Db, Queryable } from '../../db/db.ts';
import { NotFoundError, TooManyRequestsError, ValidationError } from '../../errors.ts';
import { uuidFromName } from '../../ids.ts';
import { type SlotLimits, WorkSlots } from '../../work-slots.ts';
import { matchEpisodeBlock } from '../engine/episode-block.ts';
import { matchEpisode } from '../engine/match-episode.ts';
import { singleAlertWatch } from '../engine/watchlist.ts';
import { type MatchResource, matchResource } from '../http/match-resource.ts';

export const PREVIEW_RETENTION_MS = 60 * 60 * 1000;
export const DEFAULT_WINDOW_DAYS = 7;
export const MAX_WINDOW_DAYS = 30;
export const SAMPLE_SIZE = 5;
/** A sweeping process holds a preview this long and renews it while it works. */
const LEASE_MS = 60_000;
const RENEW_MS = 10_000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Episodes read per page of a sweep: bounds one sweep's memory (an episode can be ~200 kB). */
const SWEEP_PAGE_SIZE = 25;
/** Retry-After of a preview refused for lack of room: about one sweep. */
const BUSY_RETRY_AFTER_S = 5;
/** Sweeps at once per process and per project, and the queue (docs/matching-pipeline.md#previews). */
export const DEFAULT_PREVIEW_LIMITS: SlotLimits = { perProcess: 4, perKey: 2, queue: 8 };

/** What a preview sweeps for: only the count-affecting filters (docs/matching-pipeline.md, Previews). */
export interface PreviewRequest {
  entityType: EntityRef['entityType'];
  entityId: string;
  kind: AlertKind;
  languages: string[];
  speakerRoles: FilterSpeakerRole[];
}

export type PreviewStatus = 'in_progress' | 'completed' | 'failed';

/** A sample match: a fully populated match of the hypothetical alert (it has no alert id). */
export type PreviewSample = Omit<MatchResource, 'alert_id' | 'monitor_id' | 'deliveries'>;

export interface PreviewResource {
  preview_id: string;
  status: PreviewStatus;
  window_days: number;
  started_at: string;
  completed_at?: string;
  total_matches?: number;
  by_day?: { date: string; count: number }[];
  sample?: PreviewSample[];
  error?: string;
}

interface PreviewRow {
  id: string;
  project_id: string;
  organization_id: string;
  request: PreviewRequest;
  window_days: number;
  status: PreviewStatus;
  started_at: Date;
  completed_at: Date | null;
  expires_at: Date;
  total_matches: number | null;
  by_day: { date: string; count: number }[] | null;
  sample: PreviewSample[] | null;
  error: string | null;
}

const COLUMNS = `id, project_id, organization_id, request, window_days, status, started_at, completed_at, expires_at,
  total_matches, by_day, sample, error`;
const BODY_KEYS = ['entities', 'kind', 'filters'];

/** The id is the same for the same project, entity, kind, languages, speaker roles and window. */
export function previewId(projectId: string, request: PreviewRequest, windowDays: number): string {
  return uuidFromName(
    JSON.stringify([
      'earshot:preview',
      projectId,
      request.entityType,
      request.entityId,
      request.kind,
      [...request.languages].sort(),
      [...request.speakerRoles].sort(),
      windowDays,
    ]),
  );
}

export interface PreviewDeps {
  db: Db;
  log: Logger;
  now(): Date;
  /** Sweeps at once per process and per project (the key), and the queue (default DEFAULT_PREVIEW_LIMITS). */
  limits?: SlotLimits;
}

export interface PreviewCaller {
  projectId: string;
  organizationId: string;
}

/**
 * Alert previews: a POST stores the preview (in_progress) and sweeps the window's episodes in
 * this process; a preview whose sweeping process died is taken over by the preview worker when
 * its lease runs out. Results are kept one hour from the start, then the id answers 404 and a new
 * POST sweeps again.
 */
export class PreviewService {
  private readonly running = new Set<Promise<void>>();
  private readonly slots: WorkSlots;

  constructor(private readonly deps: PreviewDeps) {
    this.slots = new WorkSlots(deps.limits ?? DEFAULT_PREVIEW_LIMITS);
  }

  async start(caller: PreviewCaller, body: unknown, windowDays: number): Promise<PreviewResource> {
    const request = await this.parse(body);
    const id = previewId(caller.projectId, request, windowDays);
    // A running or finished preview is answered without a slot; only a new sweep needs one.
    const current = await this.find(id);
    if (current && current.status !== 'failed') return resourceOf(current);
    const admitted = this.slots.tryEnter(caller.projectId);
    if (!admitted)
      throw new TooManyRequestsError('Too many previews are running; try again shortly.', BUSY_RETRY_AFTER_S);
    const now = this.deps.now();
    const { rows } = await this.deps.db.query<PreviewRow>(
      `insert into previews (id, project_id, organization_id, request, window_days, status, started_at, expires_at,
                             claimed_until)
       values ($1::text, $2::text, $3::text, $4::jsonb, $5::int, 'in_progress', $6::timestamptz, $7::timestamptz,
               $8::timestamptz)
       on conflict (id) do update set
              status = 'in_progress', started_at = excluded.started_at, expires_at = excluded.expires_at,
              claimed_until = excluded.claimed_until, completed_at = null, total_matches = null, by_day = null,
              sample = null, error = null
        where previews.expires_at <= $6::timestamptz or previews.status = 'failed'
       returning ${COLUMNS}`,
      [
        id,
        caller.projectId,
        caller.organizationId,
        JSON.stringify(request),
        windowDays,
        now,
        new Date(now.getTime() + PREVIEW_RETENTION_MS),
        new Date(now.getTime() + LEASE_MS),
      ],
    );
    const started = rows[0];
    if (started) {
      this.track(this.sweepWhenAdmitted(started, admitted));
      return resourceOf(started);
    }
    void admitted.then((leave) => leave());
    const existing = await this.find(id);
    if (!existing) throw new Error(`preview ${id} vanished while starting`);
    return resourceOf(existing);
  }

  /** The preview, if it is the caller's and not expired (an expired one is deleted). */
  async get(caller: PreviewCaller, id: string): Promise<PreviewResource> {
    const row = await this.find(id);
    if (!row || row.project_id !== caller.projectId)
      throw new NotFoundError('preview_not_found', 'Preview not found.');
    return resourceOf(row);
  }

  /** Takes over one preview whose sweeper stopped; false when there is none. */
  async takeOverOne(): Promise<boolean> {
    const leave = await this.slots.enter();
    try {
      return await this.claimAndSweepOne();
    } finally {
      leave();
    }
  }

  /** Waits for a slot, keeping the lease meanwhile (so no other process takes the preview over), then sweeps. */
  private async sweepWhenAdmitted(row: PreviewRow, admitted: Promise<() => void>): Promise<void> {
    const keepLease = setInterval(() => {
      this.renew(row).catch((error: unknown) =>
        this.deps.log.warn({ err: error, previewId: row.id }, 'could not renew a queued preview'),
      );
    }, RENEW_MS);
    keepLease.unref();
    const leave = await admitted.finally(() => clearInterval(keepLease));
    try {
      await this.sweep(row);
    } finally {
      leave();
    }
  }

  private async claimAndSweepOne(): Promise<boolean> {
    const now = this.deps.now();
    const { rows } = await this.deps.db.query<PreviewRow>(
      `update previews set claimed_until = $2::timestamptz
        where id = (select id from previews
                     where status = 'in_progress' and (claimed_until is null or claimed_until <= $1::timestamptz)
                       and expires_at > $1::timestamptz
                     order by started_at limit 1 for update skip locked)
       returning ${COLUMNS}`,
      [now, new Date(now.getTime() + LEASE_MS)],
    );
    if (!rows[0]) return false;
    this.deps.log.info({ previewId: rows[0].id }, 'taking over a preview whose sweep stopped');
    await this.sweep(rows[0]);
    return true;
  }

  async deleteExpired(): Promise<number> {
    const { rowCount } = await this.deps.db.query(
      'delete from previews where expires_at <= $1::timestamptz',
      [this.deps.now()],
    );
    return rowCount;
  }

  /** Resolves when the sweeps started by this process have finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private track(task: Promise<void>) {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  private async find(id: string): Promise<PreviewRow | null> {
    const now = this.deps.now();
    const { rows } = await this.deps.db.query<PreviewRow>(
      `select ${COLUMNS} from previews where id = $1::text`,
      [id],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.expires_at.getTime() <= now.getTime()) {
      await this.deps.db.query('delete from previews where id = $1::text and expires_at <= $2::timestamptz', [
        id,
        now,
      ]);
      return null;
    }
    return row;
  }

  private async parse(body: unknown): Promise<PreviewRequest> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ValidationError('validation_failed', 'The body must be a JSON object.');
    }
    const unknown = Object.keys(body).filter((key) => !BODY_KEYS.includes(key));
    if (unknown.length > 0 || !('entities' in body)) {
      throw new ValidationError('validation_failed', 'The preview request is invalid.', [
        ...unknown.map((key) => ({ location: `/${key}`, message: 'is not a known property' })),
        ...('entities' in body ? [] : [{ location: '/entities', message: 'is required' }]),
      ]);
    }
    const patch = parseAlertPatch(body);
    const kind = patch.kind ?? 'ENTITY_MENTION';
    const filters = patch.filters ?? {};
    if (filters.speakerRoles?.length && kind !== 'PODCAST_SPEAKER') {
      throw new ValidationError(
        'speaker_roles_not_allowed',
        'filters.speaker_roles applies only to PODCAST_SPEAKER alerts.',
        [
          {
            location: '/filters/speaker_roles',
            message: `not allowed for kind ${kind}`,
            value: filters.speakerRoles,
          },
        ],
      );
    }
    const requested = patch.entity!;
    const entity = await entitiesReadModel(this.deps.db).resolve(requested);
    if (!entity) {
      throw new ValidationError(
        'unresolved_reference',
        `entities[0].entity_id ${requested.entityId} resolves to no ${requested.entityType}; find ids with GET /v1/entities/search.`,
        [
          {
            location: '/entities/0/entity_id',
            message: 'resolves to nothing; call GET /v1/entities/search',
            value: requested.entityId,
          },
        ],
      );
    }
    return {
      entityType: entity.entityType,
      entityId: entity.entityId,
      kind,
      languages: filters.languages ?? [],
      speakerRoles: filters.speakerRoles ?? [],
    };
  }

  private async sweep(row: PreviewRow): Promise<void> {
    const { db, log } = this.deps;
    const startedAt = row.started_at;
    try {
      const result = await sweepEpisodes(db, row, () => this.renew(row));
      if (result === null) return;
      await db.query(
        `update previews set status = 'completed', completed_at = $3::timestamptz, total_matches = $4::int,
                by_day = $5::jsonb, sample = $6::jsonb, claimed_until = null
          where id = $1::text and started_at = $2::timestamptz and status = 'in_progress'`,
        [
          row.id,
          startedAt,
          this.deps.now(),
          result.total,
          JSON.stringify(result.byDay),
          JSON.stringify(result.sample),
        ],
      );
    } catch (error) {
      log.error({ err: error, previewId: row.id }, 'preview sweep failed');
      await db
        .query(
          `update previews set status = 'failed', completed_at = $3::timestamptz, error = $4::text, claimed_until = null
            where id = $1::text and started_at = $2::timestamptz and status = 'in_progress'`,
          [row.id, startedAt, this.deps.now(), 'The preview could not be computed; start it again.'],
        )
        .catch((failure: unknown) =>
          log.error({ err: failure, previewId: row.id }, 'could not record a failed preview'),
        );
    }
  }

  /** Extends the lease; false when the preview was restarted or finished elsewhere (stop sweeping). */
  private async renew(row: PreviewRow): Promise<boolean> {
    const now = this.deps.now();
    const { rowCount } = await this.deps.db.query(
      `update previews set claimed_until = $3::timestamptz
        where id = $1::text and started_at = $2::timestamptz and status = 'in_progress'`,
      [row.id, row.started_at, new Date(now.getTime() + LEASE_MS)],
    );
    return rowCount === 1;
  }
}

interface SweepResult {
  total: number;
  byDay: { date: string; count: number }[];
  sample: PreviewSample[];
}

async function sweepEpisodes(
  db: Queryable,
  row: PreviewRow,
  renew: () => Promise<boolean>,
): Promise<SweepResult | null> {
  const { request } = row;
  const entity = await findEntity(db, request.entityId);
  const names = entity ? [entity.name, ...entity.aliases] : [];
  const watch = singleAlertWatch(
    {
      alertId: `preview:${row.id}`,
      projectId: row.project_id,
      organizationId: row.organization_id,
      kind: request.kind,
      entityId: request.entityId,
      entityType: request.entityType,
      filters: {
        ...(request.languages.length ? { languages: request.languages } : {}),
        ...(request.speakerRoles.length ? { speakerRoles: request.speakerRoles } : {}),
      },
    },
    names,
  );
  const to = row.started_at;
  const from = new Date(to.getTime() - row.window_days * DAY_MS);
  const counts = new Map<string, number>();
  const sample: PreviewSample[] = [];
  let total = 0;
  let renewedAt = Date.now();
  // Newest first, so the first matches found are the sample.
  for await (const stored of episodesPublishedBetween(
    db,
    from,
    new Date(to.getTime() + 1),
    SWEEP_PAGE_SIZE,
  )) {
    if (Date.now() - renewedAt > RENEW_MS) {
      if (!(await renew())) return null;
      renewedAt = Date.now();
    }
    const { showLanguage } = stored;
    const [match] = matchEpisode(stored.episode, { ...watch, now: to, showLanguage });
    if (!match) continue;
    total++;
    const date = new Date(stored.episode.episode.published_at).toISOString().slice(0, 10);
    counts.set(date, (counts.get(date) ?? 0) + 1);
    if (sample.length < SAMPLE_SIZE) {
      const language = episodeLanguage(stored.episode, showLanguage);
      const {
        alert_id: _alert,
        monitor_id: _monitor,
        deliveries: _deliveries,
        ...item
      } = matchResource(
        {
          ...match,
          organizationId: row.organization_id,
          episode: matchEpisodeBlock(stored.episode),
          ...(language ? { language } : {}),
        },
        null,
        [],
      );
      sample.push(item);
    }
  }
  return { total, byDay: everyDay(from, to, counts), sample };
}

/** Every UTC date the window touches, oldest first, days without matches included as 0. */
function everyDay(
  from: Date,
  to: Date,
  counts: ReadonlyMap<string, number>,
): { date: string; count: number }[] {
  const days: { date: string; count: number }[] = [];
  const last = to.toISOString().slice(0, 10);
  for (
    let day = new Date(`${from.toISOString().slice(0, 10)}T00:00:00Z`);
    ;
    day = new Date(day.getTime() + DAY_MS)
  ) {
    const date = day.toISOString().slice(0, 10);
    days.push({ date, count: counts.get(date) ?? 0 });
    if (date >= last) return days;
  }
}

function resourceOf(row: PreviewRow): PreviewResource {
  const resource: PreviewResource = {
    preview_id: row.id,
    status: row.status,
    window_days: row.window_days,
    started_at: row.started_at.toISOString(),
  };
  if (row.completed_at) resource.completed_at = row.completed_at.toISOString();
  if (row.status === 'completed') {
    resource.total_matches = row.total_matches ?? 0;
    resource.by_day = row.by_day ?? [];
    resource.sample = row.sample ?? [];
  }
  if (row.error) resource.error = row.error;
  return resource;
}
