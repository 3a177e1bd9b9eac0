// A fake blog on 127.0.0.1 serving its posts as RSS 2.0 (/rss.xml) and Atom 1.0 (/atom.xml) with the quirks real feeds
// have: CDATA titles, HTML escaped into descriptions (and raw in CDATA), relative links (RSS's against the feed's URL,
// Atom's written relative to its xml:base), image enclosures beside audio ones, media:content, dates in RFC 822 (RSS) and ISO 8601 (Atom).
// It answers conditional requests as a server does (ETag and Last-Modified; If-None-Match or If-Modified-Since that
// match: 304 without a body) and records every request's headers, so tests check that Herald sent them.
// Formats: RSS 2.0 (https://www.rssboard.org/rss-specification, 2009-03-30), Atom (RFC 4287), Media RSS 1.5.1.
import { createHash } from 'node:crypto';
import { startFakeServer, type FakeServer, type RecordedRequest } from '../helpers/fake-server.js';

export interface FakeFeedItem {
  /** RSS guid / Atom id; absent: the entry is known by its link. */
  guid?: string;
  title: string;
  /** Relative or absolute. */
  link: string;
  /** HTML. */
  html?: string;
  published: Date;
  /** An image URL, sent as an enclosure (RSS) or a link rel=enclosure (Atom). */
  image?: string;
}

export interface FeedFake {
  url: string;
  server: FakeServer;
  /** Newest first, as feeds list them. */
  items: FakeFeedItem[];
  /** The requests to a path (/rss.xml, /atom.xml), with their headers. */
  requests(path: string): RecordedRequest[];
  /** How many answers were 304 Not Modified. */
  notModified: number;
  close(): Promise<void>;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function rssOf(items: FakeFeedItem[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Tom &amp; Jerry's blog</title>
  <link>/</link>
  <description>A blog</description>
${items
  .map(
    (item, index) => `  <item>
    <title><![CDATA[${item.title}]]></title>
    <link>${escape(item.link)}</link>
    ${item.guid ? `<guid isPermaLink="false">${escape(item.guid)}</guid>` : ''}
    <pubDate>${item.published.toUTCString().replace('GMT', '+0000')}</pubDate>
    ${index % 2 === 0 ? `<description>${escape(item.html ?? '')}</description>` : `<description><![CDATA[${item.html ?? ''}]]></description>`}
    <enclosure url="https://cdn.example/episode.mp3" type="audio/mpeg" length="1234"/>
    ${item.image ? `<media:content url="${escape(item.image)}" medium="image"/>` : ''}
  </item>`,
  )
  .join('\n')}
</channel>
</rss>`;
}

export function atomOf(items: FakeFeedItem[], base: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="${escape(base)}/blog/">
  <title type="html">Tom &amp;amp; Jerry's &lt;em&gt;blog&lt;/em&gt;</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>${(items[0]?.published ?? new Date(0)).toISOString()}</updated>
${items
  .map(
    (item) => `  <entry>
    <id>${escape(item.guid ?? item.link)}</id>
    <title>${escape(item.title)}</title>
    <link rel="alternate" href="${escape(item.link.replace(/^\//, ''))}"/>
    ${item.image ? `<link rel="enclosure" type="image/jpeg" href="${escape(item.image)}"/>` : ''}
    <published>${item.published.toISOString().replace('Z', '+00:00')}</published>
    <updated>${item.published.toISOString()}</updated>
    <summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">${item.html ?? ''}</div></summary>
  </entry>`,
  )
  .join('\n')}
</feed>`;
}

export async function startFeedFake(items: FakeFeedItem[] = []): Promise<FeedFake> {
  const server = await startFakeServer();
  const fake: FeedFake = {
    url: server.url,
    server,
    items,
    notModified: 0,
    requests: (path) => server.requestsTo('GET', path),
    close: () => server.close(),
  };
  const serve = (body: () => string, contentType: string) => (request: RecordedRequest) => {
    const text = body();
    const etag = `"${createHash('sha256').update(text).digest('hex').slice(0, 16)}"`;
    // Second precision, as HTTP dates have: the newest entry's date.
    const lastModified = (fake.items[0]?.published ?? new Date(0)).toUTCString();
    const headers = { etag, 'last-modified': lastModified, 'content-type': contentType };
    const ifNoneMatch = request.headers['if-none-match'];
    const ifModifiedSince = request.headers['if-modified-since'];
    // RFC 9110 §13.1.3: If-Modified-Since is ignored when If-None-Match is present.
    const unchanged = ifNoneMatch !== undefined ? ifNoneMatch === etag : ifModifiedSince !== undefined && Date.parse(String(ifModifiedSince)) >= Date.parse(lastModified);
    if (unchanged) {
      fake.notModified += 1;
      return { status: 304, headers: { etag } };
    }
    return { status: 200, headers, body: text };
  };
  server.on('GET', '/rss.xml', serve(() => rssOf(fake.items), 'application/rss+xml; charset=utf-8'));
  server.on('GET', '/atom.xml', serve(() => atomOf(fake.items, server.url), 'application/atom+xml'));
  return fake;
}
