package org.htod.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;

/**
 * A sports-results site in the shape of the Olympic sites of the core paper: results, medals and
 * schedule fragments per event, athlete biographies and country medal counts; composites (a
 * summary of each sport's results, the medal table); and pages built from them. A results fragment
 * is included by its event page, its sport's summary (and so the sport page and the home page)
 * and the pages of the countries whose athletes placed in it.
 */
final class DemoSite {
    static final String[] SPORTS = {"alpine", "athletics", "biathlon", "boxing", "canoe", "cycling", "diving",
        "fencing", "gymnastics", "judo", "rowing", "sailing", "swimming", "tennis", "triathlon", "volleyball",
        "weightlifting", "wrestling", "archery", "equestrian"};
    private static final String[] NAMES = {"Kostelic", "Maier", "Freeman", "Thorpe", "Jones", "Gebrselassie", "Redgrave",
        "Dibaba", "Nemov", "Khorkina", "Inoue", "Klim", "Perec", "Johnson", "Van Almsick", "Hackett", "Ryu", "Kim"};
    private static final String[] COUNTRIES = {"AUS", "USA", "CHN", "RUS", "GER", "FRA", "ITA", "CUB", "GBR", "KOR",
        "ROU", "NED", "UKR", "JPN", "HUN", "POL", "BLR", "CAN", "BUL", "GRE", "SWE", "NOR", "ETH", "KEN", "BRA",
        "ESP", "SUI", "CZE", "FIN", "DEN", "TUR", "IRI", "MEX", "ARG", "RSA", "NZL", "AUT", "BEL", "CRO", "SVK"};

    final int sports;
    final int events;
    final int athletes;
    final int countries;

    DemoSite(int sports, int eventsPerSport, int athletes, int countries) {
        this.sports = Math.min(sports, SPORTS.length);
        this.events = eventsPerSport;
        this.athletes = athletes;
        this.countries = Math.min(countries, COUNTRIES.length);
    }

    /** About 4,000 fragments and 400 pages. */
    static DemoSite full() {
        return new DemoSite(20, 15, 3000, 40);
    }

    /** A few hundred fragments, for tests. */
    static DemoSite small() {
        return new DemoSite(4, 5, 120, 8);
    }

    static String results(int s, int e) {
        return "/results/" + SPORTS[s] + "/event-" + e + ".html";
    }

    static String eventPage(int s, int e) {
        return "/sports/" + SPORTS[s] + "/event-" + e + ".html";
    }

    static String sportPage(int s) {
        return "/sports/" + SPORTS[s] + "/index.html";
    }

    static String summary(int s) {
        return "/summaries/" + SPORTS[s] + ".html";
    }

    static String countryPage(int c) {
        return "/countries/" + COUNTRIES[c] + ".html";
    }

    static String include(String path) {
        return "<!--#include virtual=\"" + path + "\" -->";
    }

    List<String> resultPaths() {
        List<String> out = new ArrayList<>();
        for (int s = 0; s < sports; s++) {
            for (int e = 0; e < events; e++) {
                out.add(results(s, e));
            }
        }
        return out;
    }

    List<String> pagePaths() {
        List<String> out = new ArrayList<>(List.of("/index.html", "/medals/index.html"));
        for (int s = 0; s < sports; s++) {
            out.add(sportPage(s));
            for (int e = 0; e < events; e++) {
                out.add(eventPage(s, e));
            }
        }
        for (int c = 0; c < countries; c++) {
            out.add(countryPage(c));
        }
        return out;
    }

    /** The results table of one event, as update number {@code version}. */
    String resultsFragment(String path, long version, SplittableRandom r) {
        StringBuilder b = new StringBuilder("<table class=\"results\" data-version=\"").append(version).append("\">\n");
        b.append("<caption>").append(path, "/results/".length(), path.length() - ".html".length())
                .append(" - update ").append(version).append("</caption>\n");
        for (int rank = 1; rank <= 8; rank++) {
            b.append("<tr><td>").append(rank).append("</td><td>").append(NAMES[r.nextInt(NAMES.length)])
                    .append("</td><td>").append(COUNTRIES[r.nextInt(countries)]).append("</td><td>")
                    .append(String.format("%d:%02d.%02d", r.nextInt(3), r.nextInt(60), r.nextInt(100)))
                    .append("</td></tr>\n");
        }
        return b.append("</table>\n").toString();
    }

    /** Every fragment and page of the site, leaves first. */
    List<Change> changes() {
        SplittableRandom r = new SplittableRandom(2000);
        List<Change> out = new ArrayList<>();
        out.add(Change.publish("/chrome/header.html", "<header><h1>Games 2000</h1></header>\n"));
        out.add(Change.publish("/chrome/nav.html", nav()));
        out.add(Change.publish("/chrome/footer.html", "<footer>Results are unofficial until confirmed.</footer>\n"));
        out.add(Change.publish("/chrome/ticker.html", "<marquee>Live from the venues</marquee>\n"));
        for (int a = 0; a < athletes; a++) {
            out.add(Change.publish("/athletes/" + a + ".html", "<div class=\"bio\"><b>" + NAMES[a % NAMES.length] + " #" + a
                    + "</b> (" + COUNTRIES[a % countries] + ") " + "Born in a small town; ".repeat(1 + r.nextInt(6)) + "</div>\n"));
        }
        for (int c = 0; c < countries; c++) {
            out.add(Change.publish("/medals/" + COUNTRIES[c] + ".html", "<tr><td>" + COUNTRIES[c] + "</td><td>" + r.nextInt(40)
                    + "</td><td>" + r.nextInt(40) + "</td><td>" + r.nextInt(40) + "</td></tr>\n"));
        }
        for (int s = 0; s < sports; s++) {
            StringBuilder sum = new StringBuilder("<section class=\"summary\"><h2>" + SPORTS[s] + "</h2>\n");
            for (int e = 0; e < events; e++) {
                out.add(Change.publish(results(s, e), resultsFragment(results(s, e), 0, r)));
                out.add(Change.publish("/schedule/" + SPORTS[s] + "/event-" + e + ".html", "<p>Final: day " + (1 + r.nextInt(16))
                        + ", " + (9 + r.nextInt(10)) + ":00</p>\n"));
                out.add(Change.publish("/venues/" + SPORTS[s] + "/event-" + e + ".html", "<p>Venue " + r.nextInt(30)
                        + ", capacity " + (1000 + r.nextInt(90000)) + "</p>\n"));
                sum.append(include(results(s, e)));
            }
            out.add(Change.publish(summary(s), sum.append("</section>\n").toString()));
        }
        StringBuilder table = new StringBuilder("<table class=\"medals\">\n");
        for (int c = 0; c < countries; c++) {
            table.append(include("/medals/" + COUNTRIES[c] + ".html"));
        }
        out.add(Change.publish("/medals/table.html", table.append("</table>\n").toString()));
        out.add(Change.publish("/medals/index.html", page("Medal table", include("/medals/table.html"))));
        StringBuilder home = new StringBuilder(include("/chrome/ticker.html") + include("/medals/table.html"));
        for (int s = 0; s < sports; s++) {
            out.add(Change.publish(sportPage(s), page(SPORTS[s], include(summary(s)))));
            home.append(include(results(s, 0)));
            for (int e = 0; e < events; e++) {
                StringBuilder ev = new StringBuilder(include(results(s, e)) + include("/schedule/" + SPORTS[s] + "/event-" + e
                        + ".html") + include("/venues/" + SPORTS[s] + "/event-" + e + ".html"));
                for (int k = 0; k < 5; k++) {
                    ev.append(include("/athletes/" + r.nextInt(athletes) + ".html"));
                }
                out.add(Change.publish(eventPage(s, e), page(SPORTS[s] + " event " + e, ev.toString())));
            }
        }
        out.add(Change.publish("/index.html", page("Home", home.toString())));
        for (int c = 0; c < countries; c++) {
            StringBuilder cp = new StringBuilder(include("/medals/" + COUNTRIES[c] + ".html"));
            for (int k = 0; k < 12; k++) {
                cp.append(include(results(r.nextInt(sports), r.nextInt(events))));
            }
            out.add(Change.publish(countryPage(c), page(COUNTRIES[c], cp.toString())));
        }
        return out;
    }

    private String nav() {
        StringBuilder b = new StringBuilder("<nav>");
        for (int s = 0; s < sports; s++) {
            b.append("<a href=\"/pages").append(sportPage(s)).append("\">").append(SPORTS[s]).append("</a> ");
        }
        return b.append("</nav>\n").toString();
    }

    private static String page(String title, String body) {
        return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + title + "</title></head><body>\n"
                + include("/chrome/header.html") + include("/chrome/nav.html") + "<main>\n" + body + "</main>\n"
                + include("/chrome/footer.html") + "</body></html>\n";
    }

    /** Publishes the whole site into an empty cache, in units of 500 changes; returns the changes applied. */
    int load(FragmentCache cache) {
        List<Change> all = changes();
        for (int i = 0; i < all.size(); i += 500) {
            cache.apply(all.subList(i, Math.min(all.size(), i + 500)));
        }
        return all.size();
    }
}
