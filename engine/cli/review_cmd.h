/* review_cmd.h — `cordon review`, `cordon apply` and `cordon discard`: a review-mode workspace's
 * pending changes listed (with what the host will run or trust flagged), written to the host's
 * workspace, or dropped. Each entry gets main's argv past the command's name. */
#ifndef CORDON_REVIEW_CMD_H
#define CORDON_REVIEW_CMD_H
int review_cmd_main(int argc, char **argv);
int apply_cmd_main(int argc, char **argv);
int discard_cmd_main(int argc, char **argv);
#endif
