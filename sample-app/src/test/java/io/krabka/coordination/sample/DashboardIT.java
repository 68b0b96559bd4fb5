package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeOptions;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The dashboard in a real browser: Debian's headless Chromium, driven through Debian's
 * chromedriver, shows the holder and its term; the screenshot is kept in
 * {@code target/dashboard.png}.
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
        app = SampleControlPlaneApplication.application().run(
                "--spring.kafka.bootstrap-servers=" + cluster.bootstrapServers(),
                "--server.port=0",
                "--krabka.coordination.member-id=" + MEMBER);
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
    void showsTheHolderItsTermTheDeviceAndTheRequestsItAnswered() throws Exception {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            fail("This test needs Debian's headless Chromium and its driver at " + CHROMIUM + " and " + CHROMEDRIVER
                    + ": apt-get install -y chromium chromium-driver (.ci/run installs them)");
        }
        // Debian's driver, so Selenium Manager downloads nothing.
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        Path profile = Files.createTempDirectory("dashboard-it-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toString());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--window-size=1360,1000", "--user-data-dir=" + profile);
        String port = app.getEnvironment().getProperty("local.server.port");
        WebDriver browser = new ChromeDriver(options);
        try {
            browser.get("http://localhost:" + port + "/");
            await("the dashboard shows " + MEMBER + " as holder with a term and accepted commands")
                    .atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .until(() -> MEMBER.equals(text(browser, "holder")) && text(browser, "term").matches("\\d+")
                            && text(browser, "accepted").startsWith(MEMBER + ": ")
                            && !browser.findElements(By.cssSelector("#commands .badge.accepted")).isEmpty());

            assertThat(text(browser, "member")).isEqualTo(MEMBER);
            assertThat(text(browser, "my-state")).isEqualTo("leader");
            assertThat(text(browser, "current")).isEqualTo("yes");
            String term = text(browser, "term");
            assertThat(term).matches("\\d+");
            assertThat(text(browser, "device-term")).isEqualTo(term);
            assertThat(text(browser, "rejected")).isEqualTo("none");
            assertThat(text(browser, "lease-left")).contains("s left");
            assertThat(browser.findElements(By.cssSelector("#roster tr"))).hasSize(1);

            // Requests through the leader's pipeline: each answered once, nothing left waiting.
            browser.findElement(By.id("send-requests")).click();
            await("the dashboard shows 200 requests answered once each and none waiting")
                    .atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .until(() -> text(browser, "requests-answered").equals("200") && text(browser, "requests-waiting").equals("0"));
            assertThat(text(browser, "send-result")).isEqualTo("Sent 200 requests");
            assertThat(text(browser, "requests-twice")).isEqualTo("0");
            assertThat(text(browser, "requests-here")).isEqualTo("200");
            // The table is redrawn every poll: read it within one redraw, retrying a stale read.
            await("the last 20 answers name their requests").atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .untilAsserted(() -> assertThat(browser.findElements(By.cssSelector("#answers tr td:nth-child(2)")))
                            .hasSize(20).allSatisfy(requestId -> assertThat(requestId.getText()).startsWith("req-")));

            Path screenshot = Path.of(System.getProperty("sample.target", "target")).resolve("dashboard.png");
            Files.createDirectories(screenshot.getParent());
            Files.write(screenshot, ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES));
            System.out.println("Dashboard screenshot: " + screenshot.toAbsolutePath());
        } finally {
            browser.quit();
        }
    }

    private static String text(WebDriver browser, String id) {
        return browser.findElement(By.id(id)).getText().trim();
    }
}
