import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { primaryLanguageSubtag } from '../../src/matching/engine/language.ts';
import {
  ALERT_MATCH_SUMMARIZED,
  ALERT_MATCHED,
  type AlertMatchedEventData,
  type AlertMatchSummarizedData,
} from '../../src/matching/streams.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

/**
 * The matches read model: one row per AlertMatched (a replay inserts nothing), and the
 * llm_summary of its AlertMatchSummarized.
 */
export const matchesProjection: Projection = {
  name: 'matches',
  eventTypes: [ALERT_MATCHED, ALERT_MATCH_SUMMARIZED],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const matched = events.filter((event) => event.type === ALERT_MATCHED);
    const summarized = events.filter((event) => event.type === ALERT_MATCH_SUMMARIZED);
    if (matched.length > 0) {
      const rows = matched.map(({ data }) => {
        const match = data as AlertMatchedEventData;
        return {
          id: match.matchId,
          alert_id: match.alertId,
          project_id: match.projectId,
          organization_id: match.organizationId,
          kind: match.kind,
          entity_id: match.entityId,
          source_id: match.sourceId,
          detected_at: match.detectedAt,
          published_at: match.episode.published_at,
          relevance: match.relevance,
          language: primaryLanguageSubtag(match.language) ?? null,
          podcast_popularity: match.episode.podcast_popularity ?? null,
          roles: match.roles,
          is_backfilled: match.isBackfilled,
          data: match,
        };
      });
      await tx.query(
        `insert into matches (id, alert_id, project_id, organization_id, kind, entity_id, source_id, detected_at,
                              published_at, relevance, language, podcast_popularity, roles, is_backfilled, data)
         select r.id, r.alert_id, r.project_id, r.organization_id, r.kind, r.entity_id, r.source_id, r.detected_at,
                r.published_at, r.relevance, r.language, r.podcast_popularity,
                array(select jsonb_array_elements_text(r.roles)), r.is_backfilled, r.data
           from jsonb_to_recordset($1::jsonb) as r(id text, alert_id text, project_id text, organization_id text,
                kind text, entity_id text, source_id text, detected_at timestamptz, published_at timestamptz,
                relevance text, language text, podcast_popularity double precision, roles jsonb,
                is_backfilled boolean, data jsonb)
         on conflict (id) do nothing`,
        [JSON.stringify(rows)],
      );
    }
    if (summarized.length > 0) {
      const rows = summarized.map(({ data }) => {
        const summary = data as AlertMatchSummarizedData;
        return { id: summary.matchId, summary: summary.summary, summarized_at: summary.summarizedAt };
      });
      await tx.query(
        `update matches m set llm_summary = r.summary, summarized_at = r.summarized_at
           from jsonb_to_recordset($1::jsonb) as r(id text, summary text, summarized_at timestamptz)
          where m.id = r.id`,
        [JSON.stringify(rows)],
      );
    }
  },
  async reset(tx: Queryable) {
    await tx.query('delete from matches');
  },
};
