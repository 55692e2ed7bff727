import { SPONSOR_KEY, sponsorInfo } from '../../projections/ad-leaderboard/queries.ts';
import { showsOfGuest } from '../../projections/podcast-links/queries.ts';
import { compact } from '../catalog/compact.ts';
import { toPodcastReference } from '../catalog/views.ts';
import type { Queryable } from '../db/db.ts';
import { companyCompacts, companyOrBare, contactsOf } from './companies.ts';
import { scoreBand } from './params.ts';
import { peopleOf, type RelatedShows, relatedShows, type ScoredShow, SHOWN, topicOf } from './related.ts';

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
 * holding it (s their related score), so more and closer shows raise it, never past 1. A key's
 * label (the name to show when nothing else names it) is the one its closest show gives it.
 */
function pool(
  related: readonly ScoredShow[],
  holdings: readonly { podcast_id: string; key: string; label: string | null }[],
  exclude: ReadonlySet<string>,
) {
  const scoreOf = new Map(related.map((r) => [r.podcast_id, r]));
  const pooled = new Map<string, Pooled & { labels: Map<string, string | null> }>();
  for (const h of holdings) {
    const show = scoreOf.get(h.podcast_id);
    if (!show || exclude.has(h.key)) continue;
    const p = pooled.get(h.key) ?? {
      key: h.key,
      label: null,
      score: 0,
      via: [] as ScoredShow[],
      labels: new Map(),
    };
    p.via.push(show);
    p.labels.set(h.podcast_id, h.label);
    pooled.set(h.key, p);
  }
  for (const p of pooled.values()) {
    p.via.sort((a, b) => b.score - a.score || (a.podcast_id < b.podcast_id ? -1 : 1));
    p.score = round(1 - p.via.reduce((rest, s) => rest * (1 - s.score), 1));
    p.label = p.labels.get(p.via[0]!.podcast_id) ?? null;
  }
  return [...pooled.values()]
    .map(({ labels: _, ...p }): Pooled => p)
    .sort(
      (a, b) =>
        b.score - a.score || b.via.length - a.via.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
}

/** The keys of one kind the related shows hold and the show itself does not, pooled. */
function pooledOf(related: RelatedShows, kind: 'guest' | 'sponsor') {
  return pool(
    related.shows.slice(0, RELATED_BASE),
    related.theirs.filter((l) => l.kind === kind),
    related.held[kind],
  );
}

const referenceOf = (related: RelatedShows, id: string) => {
  const row = related.podcasts.get(id);
  return row ? [toPodcastReference(row)] : [];
};

const viaOf = (related: RelatedShows, p: Pooled) =>
  p.via.slice(0, VIA).flatMap((s) => referenceOf(related, s.podcast_id));

type Person = Awaited<ReturnType<typeof peopleOf>>;

const sharedGuestIds = (scored: readonly ScoredShow[]) =>
  scored.flatMap((s) => s.basis.shared_guest_ids.slice(0, SHOWN));

function relatedItemsOf(related: RelatedShows, scored: readonly ScoredShow[], person: Person) {
  return scored.flatMap((s) => {
    const [podcast] = referenceOf(related, s.podcast_id);
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

/** Related shows as the API shows them, with people and topics in the basis. */
export async function relatedItems(db: Queryable, related: RelatedShows, scored: readonly ScoredShow[]) {
  return relatedItemsOf(related, scored, await peopleOf(db, sharedGuestIds(scored)));
}

const guestItemsOf = (related: RelatedShows, page: readonly Pooled[], person: Person) =>
  page.map((p) => ({
    band: scoreBand(p.score),
    score: p.score,
    shared_show_count: p.via.length,
    person: person(p.key, p.label),
    via: viaOf(related, p),
  }));

/** People who appeared on related shows but never on this one. */
export function guestRecommendations(db: Queryable, related: RelatedShows) {
  const pooled = pooledOf(related, 'guest');
  return async (offset: number, limit: number) => {
    const page = pooled.slice(offset, offset + limit);
    const person = await peopleOf(
      db,
      page.map((p) => p.key),
    );
    return { total: pooled.length, items: guestItemsOf(related, page, person) };
  };
}

/** Sponsors of related shows that do not advertise on this one, with contacts at their companies. */
export function sponsorRecommendations(db: Queryable, related: RelatedShows) {
  const pooled = pooledOf(related, 'sponsor');
  return async (offset: number, limit: number) => {
    const page = pooled.slice(offset, offset + limit);
    const keys = page.map((p) => p.key);
    const [info, totals] = await Promise.all([
      sponsorInfo(db, keys),
      keys.length
        ? db.query<{ k: string; total: number; last_at: Date }>(
            `select ${SPONSOR_KEY} as k, count(*)::int as total, max(published_at) as last_at
               from ads where ${SPONSOR_KEY} = any($1::text[]) and not is_network_promo group by 1`,
            [keys],
          )
        : { rows: [] },
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
          via: viaOf(related, p),
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
  // Each related read holds its show and the shows it scored: every show named below.
  const rows = new Map(relatedOf.flatMap((r) => [...r.podcasts]));
  for (const [i, a] of appearances.entries()) {
    const related = relatedOf[i]!.shows.slice(0, RELATED_BASE);
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
  const reference = (id: string) => {
    const row = rows.get(id);
    return row ? [toPodcastReference(row)] : [];
  };
  return async (offset: number, limit: number) => {
    const page = pooled.slice(offset, offset + limit);
    return {
      total: pooled.length,
      items: page.flatMap((p) => {
        const [podcast] = reference(p.key);
        if (!podcast) return [];
        return [
          {
            band: scoreBand(p.score),
            score: p.score,
            shared_show_count: p.via.length,
            podcast,
            via: p.via.slice(0, VIA).flatMap((v) => reference(v.podcast_id)),
          },
        ];
      }),
    };
  };
}

/**
 * The top five related shows, guests and sponsors: the advertising fields of GET /v1/podcasts/{id},
 * read once for all three (docs/advertising.md, "On a podcast").
 */
export async function podcastExtras(db: Queryable, podcastId: string) {
  const related = await relatedShows(db, podcastId);
  const top = related.shows.slice(0, 5);
  const guests = pooledOf(related, 'guest').slice(0, 5);
  const [person, sponsors] = await Promise.all([
    peopleOf(db, [...sharedGuestIds(top), ...guests.map((g) => g.key)]),
    sponsorRecommendations(db, related)(0, 5),
  ]);
  return {
    related: relatedItemsOf(related, top, person),
    recommended_guests: guestItemsOf(related, guests, person),
    recommended_sponsors: sponsors.items,
  };
}
