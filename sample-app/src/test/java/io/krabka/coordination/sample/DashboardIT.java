package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dashboard in a real browser: Debian's headless Chromium, driven through Debian's
 * chromedriver, shows the holder and its term, the requests it answered, and the role's
 * history as a timeline: a tenure bar per term and, after a release, the gap before the
 * next term. The screenshots are kept in {@code target/dashboard.png} (the page) and
 * {@code target/dashboard-timeline.png} (the timeline, zoomed to one minute).
 */
class DashboardIT {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final String MEMBER = "dashboard-1";

    private static KafkaTestCluster cluster;
    private static ConfigurableApplicationContext app;

    @BeforeAll
    static void startApp() {
        cluster = KafkaTestCluster.start();
        app = SampleControlPlaneApplication.application()
                .run(
                        "--spring.kafka.bootstrap-servers=" + cluster.bootstrapServers(),
                        "--server.port=0",
                        "--krabka.coordination.member-id=" + MEMBER,
                        // Every pause between two terms counts as a gap, so that the hand-off after the
                        // release below shows as one however fast it is (by default 300 ms, which a
                        // member that takes the role back from itself may beat).
                        "--sample.history.min-gap=1ms");
    }

    @AfterAll
    static void stopApp() {
        if (app != null) {
            app.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void showsTheHolderItsTermTheDeviceTheRequestsItAnsweredAndTheRolesHistory() throws Exception {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            fail("This test needs Debian's headless Chromium and its driver at " + CHROMIUM + " and " + CHROMEDRIVER
                    + ": apt-get install -y chromium chromium-driver (.ci/run installs them)");
        }
        // Debian's driver, so Selenium Manager downloads nothing.
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        Path profile = Files.createTempDirectory("dashboard-it-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toString());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--window-size=1360,1000",
                "--user-data-dir=" + profile);
        String port = app.getEnvironment().getProperty("local.server.port");
        WebDriver browser = new ChromeDriver(options);
        try {
            browser.get("http://localhost:" + port + "/");
            await("the dashboard shows " + MEMBER + " as holder with a term and accepted commands")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    // current: once the endpoint's view of the cluster was read after the grant (within its max age).
                    .until(() -> MEMBER.equals(text(browser, "holder"))
                            && text(browser, "term").matches("\\d+")
                            && "yes".equals(text(browser, "current"))
                            && text(browser, "accepted").startsWith(MEMBER + ": ")
                            && !browser.findElements(By.cssSelector("#commands .badge.accepted"))
                                    .isEmpty());

            assertThat(text(browser, "member")).isEqualTo(MEMBER);
            assertThat(text(browser, "my-state")).isEqualTo("leader");
            // Its share: the one role it contends for, held, on the default balance.
            assertThat(text(browser, "share")).isEqualTo("1 of 1 (fair 1, none, 0 moves)");
            assertThat(text(browser, "current")).isEqualTo("yes");
            // The endpoint's view of the cluster, a few polls old at most, with no problem.
            assertThat(text(browser, "view")).matches("\\d+\\.\\d s old");
            String term = text(browser, "term");
            assertThat(term).matches("\\d+");
            assertThat(text(browser, "device-term")).isEqualTo(term);
            assertThat(text(browser, "rejected")).isEqualTo("none");
            assertThat(text(browser, "lease-left")).contains("s left");
            assertThat(browser.findElements(By.cssSelector("#roster tr"))).hasSize(1);

            // An operator's call only the leader answers (@LeaderOnly): this member holds the role, so it answers here.
            browser.findElement(By.id("ask-leader")).click();
            await("the leader answers the operator's call")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(() -> !text(browser, "ask-result").isEmpty());
            assertThat(text(browser, "ask-result"))
                    .isEqualTo("handled by " + MEMBER + " under term " + term + " (here)");

            // Requests through the leader's pipeline: each answered once, nothing left waiting.
            browser.findElement(By.id("send-requests")).click();
            await("the dashboard shows 200 requests answered once each and none waiting")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(() -> text(browser, "requests-answered").equals("200")
                            && text(browser, "requests-waiting").equals("0"));
            assertThat(text(browser, "send-result")).isEqualTo("Sent 200 requests");
            assertThat(text(browser, "requests-twice")).isEqualTo("0");
            assertThat(text(browser, "requests-here")).isEqualTo("200");
            // The table is redrawn every poll: read it in one script, inside the page, so no
            // redraw comes between its rows (20 WebDriver reads, one per cell, outlasted a
            // redraw on a loaded machine and went stale for 10 s).
            await("the last 20 answers name their requests")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(answeredRequestIds(browser))
                            .hasSize(20)
                            .allSatisfy(requestId -> assertThat(requestId).startsWith("req-")));

            // The role's history: one live tenure bar of the holder, labeled with its term, and no gap yet.
            await("the timeline shows a live bar of " + MEMBER + " under term " + term)
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .untilAsserted(() -> {
                        Timeline timeline = timeline(browser);
                        assertThat(timeline.tenures()).containsExactly(MEMBER + " " + term + " live");
                        assertThat(timeline.tenureLabels()).containsExactly(MEMBER + " · term " + term);
                        assertThat(timeline.gaps()).isEmpty();
                        assertThat(timeline.summary()).startsWith("1 tenure of 1 member, 0 gaps");
                    });

            // A hand-off: the member releases the role and takes it back under a new term.
            browser.findElement(By.id("release")).click();
            await("the dashboard shows a new term after the release")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(() -> text(browser, "term").matches("\\d+")
                            && Long.parseLong(text(browser, "term")) > Long.parseLong(term)
                            && "leader".equals(text(browser, "my-state")));
            assertThat(text(browser, "release-result")).isEqualTo("released");
            String next = text(browser, "term");
            await("the timeline shows term " + term + ", a gap, then the live term " + next)
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .untilAsserted(() -> {
                        Timeline timeline = timeline(browser);
                        assertThat(timeline.tenures())
                                .containsExactlyInAnyOrder(MEMBER + " " + term, MEMBER + " " + next + " live");
                        assertThat(timeline.tenureLabels())
                                .containsExactlyInAnyOrder(MEMBER + " · term " + term, MEMBER + " · term " + next);
                        assertThat(timeline.gaps()).containsExactly(term + " > " + next);
                        assertThat(timeline.gapLabels())
                                .singleElement()
                                .asString()
                                .matches("gap (\\d+ ms|\\d+\\.\\d s)");
                        assertThat(timeline.summary()).startsWith("2 tenures of 1 member, 1 gap: ");
                    });

            // The endpoint behind it: the same tenures and gap, oldest first.
            JsonNode history = getJson(port, "/history?minutes=5");
            assertThat(history.path("minutes").asLong()).isEqualTo(5);
            assertThat(history.path("minGapMillis").asLong()).isEqualTo(1);
            assertThat(history.path("tenures").values())
                    .extracting(
                            tenure -> tenure.path("member").asString(),
                            tenure -> tenure.path("term").asLong(),
                            tenure -> tenure.path("ongoing").asBoolean())
                    .containsExactly(
                            tuple(MEMBER, Long.parseLong(term), false), tuple(MEMBER, Long.parseLong(next), true));
            assertThat(history.path("gaps").values()).singleElement().satisfies(gap -> {
                assertThat(gap.path("afterTerm").asLong()).isEqualTo(Long.parseLong(term));
                assertThat(gap.path("beforeTerm").asLong()).isEqualTo(Long.parseLong(next));
                assertThat(gap.path("millis").asLong()).isPositive();
                assertThat(gap.path("ongoing").asBoolean()).isFalse();
            });
            assertThat(get(port, "/history?minutes=0").statusCode()).isEqualTo(400);
            assertThat(get(port, "/history?minutes=31").statusCode()).isEqualTo(400);

            Path target = Path.of(System.getProperty("sample.target", "target"));
            Files.createDirectories(target);
            // The page from the top: the role, the roster and the timeline of the last 5 minutes.
            ((JavascriptExecutor) browser).executeScript("window.scrollTo(0, 0)");
            Path screenshot = target.resolve("dashboard.png");
            Files.write(screenshot, ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES));
            System.out.println("Dashboard screenshot: " + screenshot.toAbsolutePath());

            // The timeline alone, zoomed to the last minute.
            new Select(browser.findElement(By.id("history-minutes"))).selectByValue("1");
            await("the timeline covers the last minute")
                    .atMost(Duration.ofSeconds(10))
                    .ignoreExceptions()
                    .until(() -> timeline(browser).ticks().contains("\u22121 min"));
            WebElement card = browser.findElement(By.id("history-card"));
            ((JavascriptExecutor) browser).executeScript("arguments[0].scrollIntoView()", card);
            Path timeline = target.resolve("dashboard-timeline.png");
            Files.write(timeline, card.getScreenshotAs(OutputType.BYTES));
            System.out.println("Timeline screenshot: " + timeline.toAbsolutePath());
        } finally {
            browser.quit();
        }
    }

    /** What the timeline shows at one moment. */
    private record Timeline(
            List<String> tenures,
            List<String> tenureLabels,
            List<String> gaps,
            List<String> gapLabels,
            List<String> ticks,
            String summary) {}

    /** The request ids of the answers table, read in one script (the table is redrawn every poll). */
    @SuppressWarnings("unchecked")
    private static List<String> answeredRequestIds(WebDriver browser) {
        return (List<String>)
                ((JavascriptExecutor) browser)
                        .executeScript(
                                "return [...document.querySelectorAll('#answers tr td:nth-child(2)')].map((cell) => cell.textContent.trim())");
    }

    /**
     * Reads the timeline in one script: it is redrawn every 250 ms, so element by element
     * the reads could straddle a redraw. Tenures as "member term[ live]", gaps as
     * "afterTerm > beforeTerm".
     */
    @SuppressWarnings("unchecked")
    private static Timeline timeline(WebDriver browser) {
        Map<String, Object> drawn = (Map<String, Object>) ((JavascriptExecutor) browser).executeScript("""
                const chart = document.getElementById('timeline');
                const all = (selector) => [...chart.querySelectorAll(selector)];
                const texts = (selector) => all(selector).map((el) => el.textContent);
                return {
                  tenures: all('.tenure').map((g) => g.getAttribute('data-member') + ' ' + g.getAttribute('data-term')
                      + (g.classList.contains('live') ? ' live' : '')),
                  tenureLabels: texts('.tenure-label'),
                  gaps: all('.gap').map((g) => g.getAttribute('data-after-term') + ' > ' + g.getAttribute('data-before-term')),
                  gapLabels: texts('.gap-label'),
                  ticks: texts('.tick-label'),
                  summary: document.getElementById('history-summary').textContent
                };
                """);
        return new Timeline(
                (List<String>) drawn.get("tenures"),
                (List<String>) drawn.get("tenureLabels"),
                (List<String>) drawn.get("gaps"),
                (List<String>) drawn.get("gapLabels"),
                (List<String>) drawn.get("ticks"),
                (String) drawn.get("summary"));
    }

    private static JsonNode getJson(String port, String path) throws Exception {
        HttpResponse<String> response = get(port, path);
        assertThat(response.statusCode())
                .as("GET %s: %s", path, response.body())
                .isEqualTo(200);
        return JsonMapper.builder().build().readTree(response.body());
    }

    private static HttpResponse<String> get(String port, String path) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    private static String text(WebDriver browser, String id) {
        return browser.findElement(By.id(id)).getText().trim();
    }
}
