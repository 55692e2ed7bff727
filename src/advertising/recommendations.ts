import { SPONSOR_KEY, sponsorInfo } from '../../projections/ad-leaderboard/queries.ts';
import { linksOfPodcasts, showsOfGuest } from '../../projections/podcast-links/queries.ts';
import { compact } from '../catalog/compact.ts';
import { podcastReferences } from '../catalog/views.ts';
import type { Queryable } from '../db/db.ts';
import { companyCompacts, companyOrBare, contactsOf } from './companies.ts';
import { scoreBand } from './params.ts';
import { peopleOf, relatedShows, type ScoredShow, SHOWN, topicOf } from './related.ts';

/** Related shows a recommendation draws on (docs/advertising.md, "Recommendations"). */
const RELATED_BASE = 20;
const VIA = 3;

const round = (n: number) => Math.round(n * 10_000) / 10_000;

interface Pooled {
  key: string;
  label: string | null;
  score: number;
  via: ScoredShow[];
}

/**
 * Pools the shows `key`s are found on: a key's score is 1 − Π(1 − s) over the related shows
 * holding it (s their related score), so more and closer shows raise it, never past 1.
 */
function pool(
  related: readonly ScoredShow[],
  holdings: readonly { podcast_id: string; key: string; label: string | null }[],
  exclude: ReadonlySet<string>,
) {
  const scoreOf = new Map(related.map((r) => [r.podcast_id, r]));
  const pooled = new Map<string, Pooled>();
  for (const h of holdings) {
    const show = scoreOf.get(h.podcast_id);
    if (!show || exclude.has(h.key)) continue;
    const p = pooled.get(h.key) ?? { key: h.key, label: h.label, score: 0, via: [] };
    p.via.push(show);
    pooled.set(h.key, p);
  }
  for (const p of pooled.values()) {
    p.via.sort((a, b) => b.score - a.score || (a.podcast_id < b.podcast_id ? -1 : 1));
    p.score = round(1 - p.via.reduce((rest, s) => rest * (1 - s.score), 1));
  }
  return [...pooled.values()].sort(
    (a, b) =>
      b.score - a.score || b.via.length - a.via.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

async function viaRefs(db: Queryable, pooled: readonly Pooled[]) {
  return podcastReferences(
    db,
    pooled.flatMap((p) => p.via.slice(0, VIA).map((s) => s.podcast_id)),
  );
}

/** Related shows as the API shows them, with people and topics in the basis. */
export async function relatedItems(db: Queryable, scored: readonly ScoredShow[]) {
  const [refs, person] = await Promise.all([
    podcastReferences(
      db,
      scored.map((s) => s.podcast_id),
    ),
    peopleOf(
      db,
      scored.flatMap((s) => s.basis.shared_guest_ids.slice(0, SHOWN)),
    ),
  ]);
  return scored.flatMap((s) => {
    const podcast = refs.get(s.podcast_id);
    if (!podcast) return [];
    const { shared_guest_ids, shared_topics, ...basis } = s.basis;
    return [
      {
        band: scoreBand(s.score),
        score: s.score,
        podcast,
        basis: {
          ...basis,
          shared_guests: shared_guest_ids.slice(0, SHOWN).map((id) => person(id)),
          shared_topics: shared_topics.slice(0, SHOWN).map(topicOf),
        },
      },
    ];
  });
}

/** People who appeared on related shows but never on this one. */
export async function guestRecommendations(db: Queryable, podcastId: string, related: readonly ScoredShow[]) {
  const base = related.slice(0, RELATED_BASE);
  const [theirs, mine] = await Promise.all([
    linksOfPodcasts(
      db,
      base.map((s) => s.podcast_id),
      ['guest'],
    ),
    linksOfPodcasts(db, [podcastId], ['guest']),
  ]);
  const pooled = pool(base, theirs, new Set(mine.map((l) => l.key)));
  return async (offset: number, limit: number) => {
    const page = pooled.slice(offset, offset + limit);
    const [refs, person] = await Promise.all([
      viaRefs(db, page),
      peopleOf(
        db,
        page.map((p) => p.key),
      ),
    ]);
    return {
      total: pooled.length,
      items: page.map((p) => ({
        band: scoreBand(p.score),
        score: p.score,
        shared_show_count: p.via.length,
        person: person(p.key, p.label),
        via: p.via.slice(0, VIA).flatMap((s) => refs.get(s.podcast_id) ?? []),
      })),
    };
  };
}

/** Sponsors of related shows that do not advertise on this one, with contacts at their companies. */
export async function sponsorRecommendations(
  db: Queryable,
  podcastId: string,
  related: readonly ScoredShow[],
) {
  const base = related.slice(0, RELATED_BASE);
  const [theirs, mine] = await Promise.all([
    linksOfPodcasts(
      db,
      base.map((s) => s.podcast_id),
      ['sponsor'],
    ),
    linksOfPodcasts(db, [podcastId], ['sponsor']),
  ]);
  const pooled = pool(base, theirs, new Set(mine.map((l) => l.key)));
  return async (offset: number, limit: number) => {
    const page = pooled.slice(offset, offset + limit);
    const keys = page.map((p) => p.key);
    const [refs, info, totals] = await Promise.all([
      viaRefs(db, page),
      sponsorInfo(db, keys),
      db.query<{ k: string; total: number; last_at: Date }>(
        `select ${SPONSOR_KEY} as k, count(*)::int as total, max(published_at) as last_at
           from ads where ${SPONSOR_KEY} = any($1::text[]) and not is_network_promo group by 1`,
        [keys],
      ),
    ]);
    const companyIds = [...info.values()].flatMap((i) => (i.company_id ? [i.company_id] : []));
    const [companies, contacts] = await Promise.all([
      companyCompacts(db, companyIds),
      contactsOf(db, companyIds),
    ]);
    const totalOf = new Map(totals.rows.map((r) => [r.k, r]));
    return {
      total: pooled.length,
      items: page.map((p) => {
        const sponsor = info.get(p.key);
        const name = sponsor?.name ?? p.label ?? p.key;
        const companyId = sponsor?.company_id;
        return compact({
          band: scoreBand(p.score),
          score: p.score,
          shared_show_count: p.via.length,
          total_ads: totalOf.get(p.key)?.total ?? 0,
          last_ad_at: totalOf.get(p.key)?.last_at,
          sponsor: {
            id: p.key,
            name,
            ...(companyId ? { company: companyOrBare(companies, companyId, name) } : {}),
          },
          contacts: (companyId ? contacts.get(companyId) : undefined) ?? [],
          via: p.via.slice(0, VIA).flatMap((s) => refs.get(s.podcast_id) ?? []),
        });
      }),
    };
  };
}

/** Shows related to those a guest appeared on, minus those. */
export async function podcastRecommendationsForGuest(db: Queryable, personIds: readonly string[]) {
  const appearances = await showsOfGuest(db, personIds, 10);
  const own = new Set(appearances.map((a) => a.podcast_id));
  const byShow = new Map<
    string,
    { key: string; score: number; via: { podcast_id: string; score: number }[] }
  >();
  const relatedOf = await Promise.all(appearances.map((a) => relatedShows(db, a.podcast_id)));
  for (const [i, a] of appearances.entries()) {
    const related = relatedOf[i]!.slice(0, RELATED_BASE);
    for (const r of related) {
      if (own.has(r.podcast_id)) continue;
      const entry = byShow.get(r.podcast_id) ?? { key: r.podcast_id, score: 0, via: [] };
      entry.via.push({ podcast_id: a.podcast_id, score: r.score });
      byShow.set(r.podcast_id, entry);
    }
  }
  const pooled = [...byShow.values()]
    .map((e) => {
      e.via.sort((a, b) => b.score - a.score || (a.podcast_id < b.podcast_id ? -1 : 1));
      return { ...e, score: round(1 - e.via.reduce((rest, v) => rest * (1 - v.score), 1)) };
    })
    .sort((a, b) => b.score - a.score || b.via.length - a.via.length || (a.key < b.key ? -1 : 1));
  return async (offset: number, limit: number) => {
    const page = pooled.slice(offset, offset + limit);
    const refs = await podcastReferences(
      db,
      page.flatMap((p) => [p.key, ...p.via.slice(0, VIA).map((v) => v.podcast_id)]),
    );
    return {
      total: pooled.length,
      items: page.flatMap((p) => {
        const podcast = refs.get(p.key);
        if (!podcast) return [];
        return [
          {
            band: scoreBand(p.score),
            score: p.score,
            shared_show_count: p.via.length,
            podcast,
            via: p.via.slice(0, VIA).flatMap((v) => refs.get(v.podcast_id) ?? []),
          },
        ];
      }),
    };
  };
}

/** The top five related shows, guests and sponsors: the advertising fields of GET /v1/podcasts/{id}. */
export async function podcastExtras(db: Queryable, podcastId: string) {
  const related = await relatedShows(db, podcastId);
  const [items, guests, sponsors] = await Promise.all([
    relatedItems(db, related.slice(0, 5)),
    guestRecommendations(db, podcastId, related).then((page) => page(0, 5)),
    sponsorRecommendations(db, podcastId, related).then((page) => page(0, 5)),
  ]);
  return { related: items, recommended_guests: guests.items, recommended_sponsors: sponsors.items };
}
