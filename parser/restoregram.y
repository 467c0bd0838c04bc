/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The structure of an iptables-restore file:
 *   *TABLE / :CHAIN POLICY [p:b] / [p:b] RULE WORDS / COMMIT, one per line.
 * The actions in restore.c build the table and apply it at COMMIT.
 */
%define api.pure full
%define api.prefix {restoregram_}
%define parse.error verbose
%locations
%parse-param { struct rs_state *rs }
%lex-param { void *scanner }

%code requires {
#include "restore_internal.h"
}
%define api.value.type {struct rs_val}

%code {
#define YYSTYPE RESTOREGRAM_STYPE
#define YYLTYPE RESTOREGRAM_LTYPE
#include "restorescan.h"
#define scanner rs->scanner

int restorescan_lex(RESTOREGRAM_STYPE *lval, RESTOREGRAM_LTYPE *lloc, void *sc);

int restoregram_lex(RESTOREGRAM_STYPE *lval, RESTOREGRAM_LTYPE *lloc, void *sc)
{
	return restorescan_lex(lval, lloc, sc);
}

static void restoregram_error(RESTOREGRAM_LTYPE *lloc, struct rs_state *rs, const char *msg)
{
	rs_error(rs, (unsigned int)lloc->first_line, IPT_EXIT_PARAM, "%s", msg);
}
}

%token T_TABLE T_CHAINLINE T_COMMIT T_COUNTERS T_WORD T_NL
%destructor { free($$.str); } T_TABLE T_CHAINLINE T_COUNTERS T_WORD
%destructor { rs_words_free(&$$.words); } words

%%
file
	: lines
		{ if (rs_eof(rs, (unsigned int)@$.last_line)) YYABORT; }
	;

lines
	: %empty
	| lines line
	;

line
	: T_NL
	| T_TABLE T_NL
		{ $1.line = (unsigned int)@1.first_line; int r = rs_table(rs, &$1);
		  free($1.str); if (r) YYABORT; }
	| T_CHAINLINE T_NL
		{ $1.line = (unsigned int)@1.first_line; int r = rs_chain(rs, &$1);
		  free($1.str); if (r) YYABORT; }
	| T_COMMIT T_NL
		{ if (rs_commit(rs, (unsigned int)@1.first_line)) YYABORT; }
	| words T_NL
		{ int r = rs_rule(rs, NULL, &$1.words, (unsigned int)@1.first_line);
		  rs_words_free(&$1.words); if (r) YYABORT; }
	| T_COUNTERS words T_NL
		{ int r = rs_rule(rs, $1.str, &$2.words, (unsigned int)@1.first_line);
		  free($1.str); rs_words_free(&$2.words); if (r) YYABORT; }
	| T_COUNTERS T_NL
		{ rs_error(rs, (unsigned int)@1.first_line, IPT_EXIT_PARAM,
			   "Bad argument `%s'", $1.str); free($1.str); YYABORT; }
	;

words
	: T_WORD
		{ memset(&$$, 0, sizeof($$)); rs_words_push(&$$.words, $1.str); }
	| words T_WORD
		{ $$ = $1; rs_words_push(&$$.words, $2.str); }
	;
%%
