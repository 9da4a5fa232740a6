/* prompt.c — see prompt.h. Owns the reading of one answer key, what each key means, and how a
 * question is shown. Uses termios and poll on the caller's terminal, base/visible.c. Never reads past the answer's one key,
 * never returns with the terminal's mode changed. */
#include "controller/prompt.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/util.h"
#include "base/visible.h"

char prompt_read_key(int fd, double timeout_s)
{
    struct termios saved, raw;
    bool restore = tcgetattr(fd, &saved) == 0;
    if (restore) {
        raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        (void)tcsetattr(fd, TCSANOW, &raw);
    }
    char key = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int ms = timeout_s > 0 && timeout_s < 86400 ? (int)(timeout_s * 1000) : 86400 * 1000;
    if (poll(&p, 1, ms) == 1 && read(fd, &key, 1) != 1)
        key = 0;
    if (restore)
        (void)tcsetattr(fd, TCSANOW, &saved);
    return key;
}

enum prompt_answer prompt_answer_of(char key, const char *once_keys, const char *session_keys)
{
    if (key == 0)
        return PROMPT_DENY;
    if (once_keys && strchr(once_keys, key))
        return PROMPT_ONCE;
    if (session_keys && strchr(session_keys, key))
        return PROMPT_SESSION;
    return PROMPT_DENY;
}

const char *prompt_outcome(bool answered, enum prompt_answer a)
{
    return !answered ? "no answer in time: denied" : a == PROMPT_DENY ? "denied" : "allowed";
}

void prompt_say(int fd, const char *text)
{
    (void)write_all(fd, text, strlen(text)); /* the terminal went away: nobody to tell */
}

void prompt_show(int fd, const char *text, const char *keys)
{
    char *shown = visible_dup(text);
    char *line = xasprintf("\r\n\033[1mcordon:\033[0m %s.\r\n%s", shown, keys);
    prompt_say(fd, line);
    free(line);
    free(shown);
}
