/* unit-sse.c — event-stream framing and Last-Event-ID parsing. */
#include <stdlib.h>
#include "tap.h"
#include "sse.h"

int
main(void)
{
	char	*f;
	size_t	 len;

	ok(sse_format_event(7, "message.delta", "{\"a\":1}", &f, &len) == 0,
	    "format a frame");
	is_str(f, "id: 7\nevent: message.delta\ndata: {\"a\":1}\n\n", "frame text");
	is_int(len, strlen(f), "length matches");
	free(f);
	ok(sse_format_event(8, "x", "a\nb\r\nc\rd", &f, &len) == 0,
	    "multi-line data");
	is_str(f, "id: 8\nevent: x\ndata: a\ndata: b\ndata: c\ndata: d\n\n",
	    "every line break starts a data: line, none survives");
	free(f);
	ok(sse_format_event(9, "x", "", &f, &len) == 0, "empty data");
	is_str(f, "id: 9\nevent: x\ndata: \n\n", "empty data line");
	free(f);
	ok(sse_format_event(1, "bad\nevent", "{}", &f, &len) == -1,
	    "an event type with a newline is refused");
	is_int(sse_parse_last_id(NULL), 0, "no header: from the start");
	is_int(sse_parse_last_id(""), 0, "empty header: from the start");
	is_int(sse_parse_last_id("42"), 42, "a number");
	is_int(sse_parse_last_id("-1"), -1, "negative refused");
	is_int(sse_parse_last_id("4x"), -1, "junk refused");
	is_int(sse_parse_last_id("99999999999999999999999"), -1, "overflow refused");
	return done_testing();
}
