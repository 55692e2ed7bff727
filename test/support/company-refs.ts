/**
 * Every form of one company reference that an endpoint addressing a company accepts
 * (docs/knowledge-graph.md, Identifiers): the entity id, the entity slug, the producer's
 * company.id when sent, and the domain bare, in another case, with www. and as a URL.
 */
export function companyReferences(company: { id: string; slug: string; domain: string; companyId?: string }) {
  const { id, slug, domain, companyId } = company;
  return [
    id,
    slug,
    ...(companyId ? [companyId] : []),
    domain,
    domain.toUpperCase(),
    `www.${domain}`,
    `https://www.${domain}/about?from=test#top`,
  ];
}
