package org.htod.sample;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The HTML status page at {@code /}: the counts of the store, the rates of publishes, rebuilds and
 * reads, the latencies, the recovery report of the last open, and a chart of the last two minutes.
 * Everything is in the HTML as served; a small script refreshes it from {@code /stats} every two
 * seconds.
 */
final class StatusPage {
    private StatusPage() {}

    static String render(PublishingServer.Stats s) {
        StoreFigures.Snapshot f = s.figures();
        StoreFigures.Recovery r = f.recovery();
        List<ServerMetrics.Sample> h = s.history();
        ServerMetrics.Sample last = h.isEmpty() ? new ServerMetrics.Sample(0, 0, 0, 0) : h.get(h.size() - 1);
        StringBuilder b = new StringBuilder(8192);
        b.append("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>htod publishing server</title>\n<style>")
                .append("body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}")
                .append("table{border-collapse:collapse;margin:8px 0 16px}td,th{padding:3px 10px;border-bottom:1px solid #ddd;")
                .append("text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}")
                .append(".grid{display:flex;gap:32px;flex-wrap:wrap}svg{background:#fafafa;border:1px solid #ddd}")
                .append(".pub{stroke:#c0392b}.read{stroke:#2471a3}code{background:#f3f3f3;padding:1px 4px}</style>\n")
                .append("</head><body>\n<h1>htod publishing server</h1>\n<p>Store <code>").append(esc(s.store()))
                .append("</code>, up <span id=\"uptime\">").append(fmt(s.uptimeSeconds())).append("</span> s. ")
                .append("Try <a href=\"/pages/index.html\">/pages/index.html</a>, <a href=\"/stats\">/stats</a>, ")
                .append("<a href=\"/metrics\">/metrics</a>, <a href=\"/graph/chrome/nav.html\">/graph/chrome/nav.html</a>.</p>\n")
                .append("<div class=\"grid\"><div><h2>Store</h2><table>\n");
        row(b, "fragments", "Fragments (cache1)", f.fragments());
        row(b, "assembled", "Assembled composites (cache2)", f.assembled());
        row(b, "graphNodes", "Graph nodes", f.graphNodes());
        row(b, "graphEdges", "Graph edges", f.graphEdges());
        row(b, "expiring", "Fragments with a time to live", f.expiring());
        b.append("</table><h2>Activity</h2><table>\n");
        row(b, "publishes", "Publishes (durable)", s.counts().publishes());
        row(b, "units", "Units committed", s.counts().units());
        row(b, "rebuilds", "Pages rebuilt", s.counts().rebuilds());
        row(b, "reconstructions", "of which by reconstruction", s.counts().reconstructions());
        row(b, "pageReads", "Page reads", s.counts().pageReads());
        b.append("<tr><td>Publishes/s</td><td class=\"n\" id=\"pubRate\">").append(fmt(last.publishesPerSecond()))
                .append("</td></tr><tr><td>Rebuilds/s</td><td class=\"n\" id=\"rebuildRate\">")
                .append(fmt(last.rebuildsPerSecond())).append("</td></tr><tr><td>Page reads/s</td><td class=\"n\" id=\"readRate\">")
                .append(fmt(last.readsPerSecond())).append("</td></tr>\n");
        latency(b, "publish", s.publishLatencyMs());
        latency(b, "read", s.readLatencyMs());
        b.append("</table></div>\n<div><h2>Last two minutes</h2>").append(chart(h))
                .append("<p><span style=\"color:#c0392b\">&#9644; publishes/s</span> &nbsp; ")
                .append("<span style=\"color:#2471a3\">&#9644; page reads/s</span></p>\n<h2>Last open</h2><table>\n")
                .append("<tr><td>Shut down cleanly before</td><td id=\"clean\">").append(r.clean() ? "yes" : "no (recovered)")
                .append("</td></tr>\n<tr><td>Opened from</td><td>")
                .append(r.logged() ? "the last checkpoint and the log" : "the heap: " + esc(r.heapPath())).append("</td></tr>\n")
                .append("<tr><td>Store open</td><td class=\"n\">").append(fmt(r.heapMillis() + r.tablesMillis()))
                .append(" ms</td></tr>\n<tr><td>Server ready in</td><td class=\"n\" id=\"ready\">").append(fmt(r.serverReadyMillis()))
                .append(" ms</td></tr>\n");
        if (r.logged()) {
            b.append("<tr><td>Log read</td><td class=\"n\">").append(String.format(Locale.ROOT, "%,d", r.logBytesRead()))
                    .append(" bytes</td></tr>\n<tr><td>Log records replayed</td><td class=\"n\">").append(r.logRecordsReplayed())
                    .append("</td></tr>\n<tr><td>Changes back in the write buffer</td><td class=\"n\">")
                    .append(r.changesBuffered()).append("</td></tr>\n");
        } else {
            b.append("<tr><td>Entries recounted</td><td class=\"n\">").append(r.entriesCounted())
                    .append("</td></tr>\n<tr><td>Leaked blocks freed</td><td class=\"n\">").append(r.leakedBlocksFreed())
                    .append("</td></tr>\n");
        }
        b.append("</table><p style=\"max-width:560px;font-size:12px;color:#555\">").append(esc(r.detail()))
                .append("</p></div></div>\n").append(SCRIPT).append("</body></html>\n");
        return b.toString();
    }

    private static void row(StringBuilder b, String id, String label, long v) {
        b.append("<tr><td>").append(label).append("</td><td class=\"n\" id=\"").append(id).append("\">")
                .append(String.format(Locale.ROOT, "%,d", v)).append("</td></tr>\n");
    }

    private static void latency(StringBuilder b, String what, Map<String, Double> ms) {
        b.append("<tr><td>").append(what).append(" latency p50 / p99</td><td class=\"n\">")
                .append(fmt(ms.getOrDefault("p50", 0.0))).append(" / ").append(fmt(ms.getOrDefault("p99", 0.0)))
                .append(" ms</td></tr>\n");
    }

    static final int W = 480;
    static final int H = 160;

    /** Two polylines over the history, scaled to the larger of the two series. */
    private static String chart(List<ServerMetrics.Sample> h) {
        double max = 1;
        for (ServerMetrics.Sample x : h) {
            max = Math.max(max, Math.max(x.publishesPerSecond(), x.readsPerSecond()));
        }
        return "<svg id=\"chart\" width=\"" + W + "\" height=\"" + H + "\" viewBox=\"0 0 " + W + " " + H + "\">"
                + "<polyline class=\"pub\" fill=\"none\" stroke-width=\"2\" points=\"" + points(h, true, max) + "\"/>"
                + "<polyline class=\"read\" fill=\"none\" stroke-width=\"2\" points=\"" + points(h, false, max) + "\"/>"
                + "<text x=\"4\" y=\"14\" font-size=\"11\" id=\"chartMax\">" + fmt(max) + "/s</text></svg>";
    }

    private static String points(List<ServerMetrics.Sample> h, boolean publishes, double max) {
        StringBuilder b = new StringBuilder();
        int off = ServerMetrics.HISTORY - h.size();
        for (int i = 0; i < h.size(); i++) {
            double v = publishes ? h.get(i).publishesPerSecond() : h.get(i).readsPerSecond();
            b.append(String.format(Locale.ROOT, "%.1f,%.1f ", (off + i) * (W - 1.0) / (ServerMetrics.HISTORY - 1), H - 2 - v / max * (H - 20)));
        }
        return b.toString().trim();
    }

    private static String fmt(double v) {
        return v >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** Refreshes the numbers and the chart from /stats; the page is complete without it. */
    private static final String SCRIPT = "<script>\n"
            + "const W=" + W + ",H=" + H + ",N=" + ServerMetrics.HISTORY + ";\n"
            + "function fmt(v){return v>=100?Math.round(v).toLocaleString('en-US'):v.toFixed(1);}\n"
            + "function set(id,v){const e=document.getElementById(id);if(e)e.textContent=v;}\n"
            + "function pts(h,k,max){const off=N-h.length;return h.map((s,i)=>((off+i)*(W-1)/(N-1)).toFixed(1)+','"
            + "+(H-2-s[k]/max*(H-20)).toFixed(1)).join(' ');}\n"
            + "async function tick(){try{const s=await (await fetch('/stats')).json();const f=s.figures,c=s.counts;\n"
            + "for(const k of ['fragments','assembled','graphNodes','graphEdges','expiring'])set(k,f[k].toLocaleString('en-US'));\n"
            + "for(const k of ['publishes','units','rebuilds','reconstructions','pageReads'])set(k,c[k].toLocaleString('en-US'));\n"
            + "set('uptime',fmt(s.uptimeSeconds));const h=s.history;if(h.length){const l=h[h.length-1];\n"
            + "set('pubRate',fmt(l.publishesPerSecond));set('readRate',fmt(l.readsPerSecond));set('rebuildRate',fmt(l.rebuildsPerSecond));}\n"
            + "let max=1;for(const x of h)max=Math.max(max,x.publishesPerSecond,x.readsPerSecond);set('chartMax',fmt(max)+'/s');\n"
            + "document.querySelector('#chart .pub').setAttribute('points',pts(h,'publishesPerSecond',max));\n"
            + "document.querySelector('#chart .read').setAttribute('points',pts(h,'readsPerSecond',max));}catch(e){}}\n"
            + "setInterval(tick,2000);\n</script>\n";
}
