import type { Rng } from './random.js'

/**
 * Hand-written vocabularies the generators draw from. Written from general knowledge of what web
 * and system logs contain, not copied from the test corpus; ordered roughly by real popularity
 * because ZipfPicker treats index 0 as the most common entry.
 */

export const WORDS = [
  'about', 'blog', 'projects', 'docs', 'guide', 'install', 'release', 'notes', 'linux', 'kafka', 'logging',
  'metrics', 'search', 'tools', 'python', 'ruby', 'golang', 'rust', 'nginx', 'apache', 'deploy', 'config',
  'monitoring', 'dashboard', 'talks', 'slides', 'archive', 'tags', 'feed', 'photos', 'hardware', 'software',
  'design', 'network', 'dns', 'dhcp', 'security', 'backup', 'storage', 'cluster', 'queue', 'stream', 'pipeline',
  'parser', 'grok', 'regex', 'shell', 'vim', 'tmux', 'xdotool', 'keyboard', 'mouse', 'window', 'desktop',
  'server', 'client', 'proxy', 'cache', 'index', 'events', 'alerts', 'charts', 'graphs', 'intro', 'advanced',
  'tutorial', 'example', 'reference', 'faq', 'changelog', 'roadmap', 'contact', 'team', 'jobs', 'pricing'
] as const

export const IMAGE_WORDS = [
  'logo', 'banner', 'header', 'footer', 'avatar', 'screenshot', 'diagram', 'chart', 'photo', 'thumb', 'icon',
  'background', 'sprite', 'arrow', 'button', 'hero', 'figure', 'overview', 'architecture', 'flow', 'graph'
] as const

/** Browser and bot user agents of one era, most popular first. */
export const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_3 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:122.0) Gecko/20100101 Firefox/122.0',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2.1 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36 Edg/121.0.0.0',
  'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:122.0) Gecko/20100101 Firefox/122.0',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.6167.184 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (iPad; CPU OS 17_3 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
  'Feedly/1.0 (+http://www.feedly.com/fetcher.html; 41 subscribers; like FeedFetcher-Google)',
  'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)',
  'curl/8.5.0',
  'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Safari/537.36',
  'python-requests/2.31.0',
  'Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)',
  'Wget/1.21.4',
  'Mozilla/5.0 (Linux; Android 13; SM-S908B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0',
  'Go-http-client/1.1',
  'Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:122.0) Gecko/20100101 Firefox/122.0',
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  'Twitterbot/1.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36 OPR/105.0.0.0'
] as const

export const SEARCH_REFERERS = [
  'https://www.google.com/',
  'https://www.bing.com/',
  'https://duckduckgo.com/',
  'https://news.ycombinator.com/',
  'https://www.reddit.com/',
  'https://t.co/',
  'https://www.google.de/',
  'https://stackoverflow.com/questions'
] as const

/** Country code with a typical ASN for eyeball networks there. */
export const GEO = [
  ['US', 7922], ['US', 701], ['DE', 3320], ['GB', 2856], ['FR', 3215], ['IN', 55836], ['BR', 28573], ['JP', 2516],
  ['NL', 1136], ['CA', 812], ['US', 16509], ['US', 15169], ['RU', 12389], ['PL', 5617], ['AU', 1221], ['ES', 3352],
  ['IT', 3269], ['SE', 3301], ['CN', 4134], ['KR', 4766]
] as const

export const EDGE_LOCATIONS = ['IAD', 'FRA', 'LHR', 'CDG', 'AMS', 'SJC', 'NRT', 'GRU', 'BOM', 'SIN', 'SYD', 'ORD', 'DFW', 'WAW'] as const

/**
 * Popular domain names for DNS logs: big platforms first, long tail after. Package-repository hosts are invented
 * (.example, reserved by RFC 2606), so the registries the build reaches appear in the code only where it uses them.
 */
export const DOMAINS = [
  'www.google.com', 'connectivitycheck.gstatic.com', 'clients4.google.com', 'www.gstatic.com', 'fonts.googleapis.com',
  'graph.facebook.com', 'api.github.com', 'login.microsoftonline.com', 'www.msftconnecttest.com', 'outlook.office365.com',
  'teams.microsoft.com', 'settings-win.data.microsoft.com', 'ctldl.windowsupdate.com', 'www.apple.com', 'gateway.icloud.com',
  'mesu.apple.com', 'push.apple.com', 'detectportal.firefox.com', 'firefox.settings.services.mozilla.com',
  'incoming.telemetry.mozilla.org', 'push.services.mozilla.com', 'www.youtube.com', 'i.ytimg.com', 'yt3.ggpht.com',
  'play.googleapis.com', 'android.clients.google.com', 'mtalk.google.com', 'www.wikipedia.org', 'en.wikipedia.org',
  'upload.wikimedia.org', 'github.com', 'objects.githubusercontent.com', 'registry.modhub.example', 'pkgindex.example',
  'files.pkgindex.example', 'deb.distro.example', 'security.distro.example', 'archive.osmirror.example', 'ntp.ubuntu.com',
  'pool.ntp.org', 'time.cloudflare.com', 'cloudflare-dns.com', 'dns.google', 'www.amazon.com', 'images-na.ssl-images-amazon.com',
  'www.netflix.com', 'occ-0-1234-1235.1.nflxso.net', 'spclient.wg.spotify.com', 'open.spotify.com', 'discord.com',
  'gateway.discord.gg', 'web.whatsapp.com', 'mmg.whatsapp.net', 'www.instagram.com', 'scontent.cdninstagram.com',
  'api.twitter.com', 'pbs.twimg.com', 'www.reddit.com', 'www.redditstatic.com', 'slack.com', 'wss-primary.slack.com',
  'zoom.us', 'steamcommunity.com', 'cdn.steamstatic.com', 'store.steampowered.com', 'www.bing.com', 'edge.microsoft.com',
  'config.edge.skype.com', 'self.events.data.microsoft.com', 'a.nel.cloudflare.com', 'static.cloudflareinsights.com',
  'www.googletagmanager.com', 'www.google-analytics.com', 'stats.g.doubleclick.net', 'pagead2.googlesyndication.com',
  'tpc.googlesyndication.com', 'securepubads.g.doubleclick.net', 'ads.pubmatic.com', 'ib.adnxs.com', 'cdn.jsmirror.example',
  'modcdn.example', 'ajax.googleapis.com', 'code.jquery.com', 'stackoverflow.com', 'cdn.sstatic.net', 'news.ycombinator.com',
  'duckduckgo.com', 'weather.com', 'api.openweathermap.org', 'ocsp.digicert.com', 'ocsp.pki.goog', 'r3.o.lencr.org',
  'crl.globalsign.com', 'e.crashlytics.com', 'firebaseinstallations.googleapis.com', 'app-measurement.com',
  'sentry.io', 'browser-intake-datadoghq.com', 'bam.nr-data.net'
] as const

/** CDN-ish CNAME targets a popular name can resolve through. */
export const CDN_SUFFIXES = [
  'edgekey.net', 'akamaiedge.net', 'cloudfront.net', 'fastly.net', 'trafficmanager.net', 'azureedge.net',
  'l.google.com', 'edgesuite.net', 'cdn.cloudflare.net', 'llnwd.net'
] as const

/** A plausible hostname label: word + optional digits, e.g. "api3" or "edge-cache". */
export function label(rng: Rng): string {
  const w = rng.pick(WORDS)
  return rng.chance(0.3) ? `${w}${rng.range(1, 40)}` : w
}

export function randomPublicIpv4(rng: Rng): string {
  // Skip 0/8, 10/8, 127/8 and multicast so addresses look routable.
  let a = rng.range(1, 223)
  while (a === 10 || a === 127) a = rng.range(1, 223)
  return `${a}.${rng.int(256)}.${rng.int(256)}.${rng.range(1, 254)}`
}
