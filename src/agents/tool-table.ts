/**
 * The MCP tools (docs/agents.md): each is a REST route performed in-process, so a tool validates,
 * fails and renders exactly as its route does. A tool is served only when its route exists in
 * the app; a surface that lands later brings its tools with it, one line each here.
 */
export const TOOL_SETS = ['system', 'resolve', 'podcasts', 'advertising', 'alerts'] as const;
export type ToolSet = (typeof TOOL_SETS)[number];

export interface RouteRef {
  method: 'GET' | 'POST';
  /** The fastify path, `:name` for path parameters. */
  path: string;
}

export interface ToolSpec {
  name: string;
  set: Exclude<ToolSet, 'system'>;
  description: string;
  /** Changes state: needs scope mcp:write. */
  write?: boolean;
  /** The route, or one route per value of the tool's `mode` argument. */
  route: RouteRef | Record<string, RouteRef>;
}

const get = (path: string): RouteRef => ({ method: 'GET', path });
const post = (path: string): RouteRef => ({ method: 'POST', path });

export const TOOL_TABLE: readonly ToolSpec[] = [
  {
    name: 'earshot_entity_resolve',
    set: 'resolve',
    description:
      'Find knowledge-graph entities (people, companies, topics) by name; returns ids and slugs for the other tools.',
    route: get('/v1/entities/search'),
  },
  {
    name: 'earshot_person_resolve',
    set: 'resolve',
    description: 'Find people by name or company.',
    route: get('/v1/people'),
  },
  {
    name: 'earshot_company_resolve',
    set: 'resolve',
    description: 'Find companies by name, ticker, domain, CIK or Wikidata id.',
    route: get('/v1/companies'),
  },
  {
    name: 'earshot_podcast_resolve',
    set: 'resolve',
    description: 'Find podcasts by title, forgiving typos and pasted episode titles.',
    route: get('/v1/podcasts/search'),
  },
  {
    name: 'earshot_podcast_get',
    set: 'podcasts',
    description: 'One podcast by id, slug or Apple id, with topics and format profile.',
    route: get('/v1/podcasts/:id'),
  },
  {
    name: 'earshot_podcast_list_episodes',
    set: 'podcasts',
    description: "A podcast's episodes, newest first.",
    route: get('/v1/podcasts/:id/episodes'),
  },
  {
    name: 'earshot_episode_get',
    set: 'podcasts',
    description:
      'One episode by id or slug; include adds transcript, segments, clips, speakers, topics or ads.',
    route: get('/v1/podcasts/episodes/:id'),
  },
  {
    name: 'earshot_search_transcripts',
    set: 'podcasts',
    description: 'Search transcript passages by keywords, meaning or entity.',
    route: get('/v1/podcasts/episodes/search'),
  },
  {
    name: 'earshot_find_mentions',
    set: 'podcasts',
    description: 'Episodes that mention an entity, with the mentioning passages.',
    route: get('/v1/podcasts/mentions'),
  },
  {
    name: 'earshot_list_clips',
    set: 'podcasts',
    description: 'Clips by episode, podcast, speaker or type, most engaging first.',
    route: get('/v1/podcasts/clips'),
  },
  {
    name: 'earshot_get_rankings',
    set: 'podcasts',
    description:
      'Chart rankings: mode chart (a chart), movers (changes over window_days) or history (one podcast).',
    route: {
      chart: get('/v1/podcasts/rankings'),
      movers: get('/v1/podcasts/rankings/movers'),
      history: get('/v1/podcasts/:id/rankings/history'),
    },
  },
  {
    name: 'earshot_podcast_related',
    set: 'podcasts',
    description: 'Podcasts related to a podcast, scored with their basis.',
    route: get('/v1/podcasts/:id/related'),
  },
  {
    name: 'earshot_episode_related',
    set: 'podcasts',
    description: 'Episodes related to an episode.',
    route: get('/v1/podcasts/episodes/:id/related'),
  },
  {
    name: 'earshot_podcast_recommendations',
    set: 'podcasts',
    description:
      'Recommendations: mode sponsors or guests for a podcast, podcasts for a guest (id is the person).',
    route: {
      sponsors: get('/v1/podcasts/:id/recommendations/sponsors'),
      guests: get('/v1/podcasts/:id/recommendations/guests'),
      podcasts: get('/v1/podcasts/guests/:id/recommendations/podcasts'),
    },
  },
  {
    name: 'earshot_ad_leaderboard',
    set: 'advertising',
    description: 'Top sponsors ranked by ad count or reach (premium).',
    route: get('/v1/podcasts/advertising/leaderboard'),
  },
  {
    name: 'earshot_ad_timeseries',
    set: 'advertising',
    description: 'Ad counts over time for a sponsor or company.',
    route: get('/v1/podcasts/advertising/timeseries'),
  },
  {
    name: 'earshot_company_ad_presence',
    set: 'advertising',
    description: "A company's podcast advertising: reach, read types, placements, recent ads.",
    route: get('/v1/companies/:id/podcast/advertising'),
  },
  {
    name: 'earshot_podcast_sponsors',
    set: 'advertising',
    description: "A podcast's sponsors and recent ads.",
    route: get('/v1/podcasts/:id/advertising'),
  },
  {
    name: 'earshot_alert_create',
    set: 'alerts',
    write: true,
    description: 'Create an alert watching one entity (runs a 7-day backfill that never notifies).',
    route: post('/v1/projects/:projectId/alerts'),
  },
  {
    name: 'earshot_alert_list',
    set: 'alerts',
    description: "The project's alerts.",
    route: get('/v1/projects/:projectId/alerts'),
  },
  {
    name: 'earshot_alert_preview',
    set: 'alerts',
    description:
      'Estimate what an alert would match: mode start (begins a preview) or result (reads it by preview_id).',
    route: {
      start: post('/v1/projects/:projectId/alerts/preview'),
      result: get('/v1/alerts/preview/:previewId'),
    },
  },
  {
    name: 'earshot_alert_list_matches',
    set: 'alerts',
    description: "An alert's matches, newest first.",
    route: get('/v1/alerts/:id/matches'),
  },
  {
    name: 'earshot_alert_list_deliveries',
    set: 'alerts',
    description: "An alert's deliveries and their status.",
    route: get('/v1/alerts/:id/deliveries'),
  },
];
