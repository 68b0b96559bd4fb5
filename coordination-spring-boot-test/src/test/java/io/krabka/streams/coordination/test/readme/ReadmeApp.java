package io.krabka.streams.coordination.test.readme;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application of the README's five-minute example: its Dispatcher, nothing else. */
@SpringBootApplication
class ReadmeApp {
}
