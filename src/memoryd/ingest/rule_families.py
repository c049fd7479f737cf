"""The rule families of the extractor, one regex a line, English and Chinese.

A line is ``slot flags | regex`` (:func:`memoryd.text.rule_tables.rules`):
the slot a match fills (``-``: derived from the value, ``uses``: the tool
used for a topic), and the flags ``c`` (the wording says the value changed:
"I moved to", "我搬到"), ``x`` (one value at a time: "prefer", "favourite")
and ``e`` (the wording says the value is over: "I left teaching", "分手了").
A change is read as often as a first statement: a user says "I live in
Madrid" once and "we relocated to Oslo", "I left teaching and now work as",
"我不当程序员了，开始做产品经理" later, and the later one is what counts.
"""

from __future__ import annotations

from memoryd.text.rule_tables import Kind, Rule, rules

BIOGRAPHY_RULES = rules(r"""
name       | \bmy\s+(?:first\s+|full\s+)?name\s+is\s+<OBJ>
name       | \bmy\s+name's\s+<OBJ>
name       | \b(?:call me|I(?:'m| am) called|I\s+go\s+by)\s+(?P<obj><NAME>)
name       | ^(?:(?:hi|hello|hey)(?:\s+there)?[\s,!.]+)?I(?:'m|’m| am)\s+(?P<obj><NAME>)(?=\s*(?:[,.!;]|$)|\s+(?:and|but|from|here)\b)
name       | <WO>(?:的名字(?:是|叫)|叫)<OBJ>
age        | <IM>(?P<obj>\d{1,3})(?=\s+years?\s+old|\s*(?:[,;.!]|$)|\s+(?:and|but|now)\b)
age c      | \bI(?:'ve| have)?\s+(?:just\s+)?turned\s+(?P<obj>\d{1,3})\b
age        | <WO>(?:今年|现在)?(?P<obj>\d{1,3}|[一二三四五六七八九十两百]{1,4})岁(?=了|$|[，,。！!])
birthday   | \bmy\s+birthday\s+is\s+(?:on\s+)?<OBJ>
birthday   | <I>was\s+born\s+(?:on\s+|in\s+(?=\d))<OBJ>
birthday   | <WO>的?生日是?<OBJ>
birthday   | 我(?:是|出生于|生于)(?P<obj>[^，,]*?\d[^，,]*?)(?:出生|生)?的?$
lives_in   | <SUBJ>(?:currently\s+|now\s+|still\s+)?(?:live|reside)\s+in\s+<OBJ>
lives_in   | \b(?:I(?:'m|’m| am)|we(?:'re| are))\s+(?:currently\s+|now\s+)?(?:living|based|settled)\s+in\s+<OBJ>
lives_in   | \b(?:my|our)\s+(?:home|house|place|flat|apartment)\s+is\s+in\s+<OBJ>
lives_in c | <SUBJ>(?:just\s+|recently\s+|finally\s+|now\s+|also\s+)?(?:moved|relocated|emigrated)\s+(?:back\s+)?(?:from\s+(?P<other>[^,;]+?)\s+)?to\s+(?!an?\s)<OBJ>
lives_in c | <SUBJ>(?:just\s+|finally\s+|recently\s+)?(?:bought|rented|found|got)\s+(?:a|an|our|my)\s+(?:new\s+|first\s+)?(?:house|flat|apartment|place|home|condo)\s+in\s+<OBJ>
lives_in   | <WO>(?:现在|目前|一直|以前|之前|原来|曾经)?(?:住在|居住在|生活在|定居在?)<OBJ>
lives_in c | <WE><CNWHEN>(?:搬到|搬去|搬家到|搬回到?|移居到?)了?<OBJ>
lives_in   | <WO>(?:现在|目前)?在(?P<obj>[^，,]{1,15}?)(?:生活|居住|定居)
from       | <IM>(?:originally\s+)?from\s+<OBJ>
from       | <I>(?:was\s+born|grew\s+up)\s+in\s+(?!\d)<OBJ>
from       | <WO>(?:来自|出生在|生在)<OBJ>
from       | 我在(?P<obj>[^，,]{1,15}?)长大
from       | 我是(?P<obj>[^，,的]{1,10}?)人$
works_at   | <I>(?:currently\s+|now\s+|still\s+)?work\s+(?:at|for)\s+<OBJ>
works_at   | <IM>(?:currently\s+|now\s+)?(?:working|employed)\s+(?:at|for|by)\s+<OBJ>
works_at c | <SUBJ>(?:just\s+|recently\s+)?(?:joined|started\s+(?:working\s+)?at|got\s+a\s+(?:new\s+)?job\s+at)\s+<OBJ>
works_at   | <WO>(?:现在|目前|以前|之前|原来|曾经)?在(?P<obj>[^，,]{1,20}?)(?:工作|上班|任职|实习)
works_at c | <WO><CNWHEN>(?:加入了?|入职了?)<OBJ>
works_at e | <WO><CNWHEN>换(?:了)?(?:个|份)?(?P<obj>工作)了?
diet       | <IM>(?:now\s+|currently\s+|still\s+|strictly\s+)?(?:an?\s+)?(?:strict\s+)?(?P<obj>vegetarian|vegan|pescatarian|keto|paleo|gluten-free|lactose[- ]intolerant|flexitarian|kosher|halal)\b
diet c     | <SUBJ>(?:just\s+|recently\s+)?(?:went|gone|turned|became)\s+(?P<obj>vegetarian|vegan|pescatarian|keto|paleo|gluten-free|plant-based)\b
diet       | <SUBJ>(?:now\s+|currently\s+|strictly\s+)?(?:follow|do|eat|am\s+on)\s+an?\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)\s+diet\b
diet       | <IM>(?:now\s+)?on\s+an?\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)\s+diet\b
diet c     | <SUBJ>(?:just\s+|recently\s+)?(?:started|began)\s+eating\s+<OBJ>
diet c     | <SUBJ>(?:just\s+|recently\s+)?(?:stopped|quit|gave\s+up)\s+eating\s+<OBJ>
diet e     | <IM>(?:no\s+longer|not)\s+(?:an?\s+)?(?P<obj>vegetarian|vegan|pescatarian|keto|paleo)\b
diet       | 我(?:是)?(?P<obj>吃素|素食者|素食主义者)
diet e     | <WO><CNWHEN>(?:不再|不)(?P<obj>吃素)
diet c     | <WO><CNWHEN>(?:现在|开始)?(?P<obj>什么都吃|吃肉)
allergy    | <IM>allergic\s+to\s+<OBJ>
allergy    | 我对(?P<obj>[^，,]{1,15}?)过敏
job        | <I>(?:currently\s+|now\s+|still\s+)?work(?:ing)?\s+as\s+(?:an?\s+)?<OBJ>
job        | \bmy\s+(?:job|profession|occupation|role|title)\s+is\s+(?:an?\s+)?<OBJ>
job        | <IM>(?:now\s+|currently\s+|still\s+)?an?\s+(?P<obj>(?:[\w-]+\s+){0,3}?(?:<JOBS>))s?\b(?:\s+(?:at|for|with)\s+(?P<org>[^,;:.!?]+?))?(?=\s*(?:[,;:.!?]|$)|\s+(?:and|but|since|in|this|last|now|because|so)\b)
job        | <I>(?:currently\s+|now\s+|still\s+)?teach\s+<OBJ>
job c      | <SUBJ>(?:was\s+|got\s+|have\s+been\s+|just\s+got\s+)?promoted\s+to\s+(?:an?\s+)?<OBJ>
job c      | <SUBJ>(?:just\s+)?(?:got|landed|started|accepted|took)\s+a\s+(?:new\s+)?(?:job|position|role)\s+as\s+(?:an?\s+)?<OBJ>
job c      | <SUBJ>(?:just\s+|recently\s+)?(?:became|become)\s+an?\s+<OBJ>
job c      | <SUBJ>(?:just\s+|recently\s+)?(?:started|began)\s+(?:working|a\s+new\s+job)\s+as\s+(?:an?\s+)?<OBJ>
job c      | <SUBJ>(?:just\s+|recently\s+|finally\s+)?(?:opened|started|launched|founded|set\s+up|run)\s+(?:my|our)\s+own\s+<OBJ>
job c      | <SUBJ>(?:just\s+|recently\s+|finally\s+|officially\s+)?(?P<obj>retired)\b
job c      | <IM>(?:now\s+)?(?P<obj>retired|unemployed|self-employed|between\s+jobs|freelancing|a\s+stay-at-home\s+(?:mom|dad|parent))\b
job e      | <SUBJ>(?:just\s+|recently\s+|finally\s+)?(?:left|quit|lost|resigned\s+from|gave\s+up|stopped)\s+(?P<obj>(?:my|the|our)\s+(?:[\w-]+\s+){0,2}?(?:job|position|role|career)|teaching|nursing|[\w-]+ing(?=\s+(?:and|to|after)\b|[,.!;]|$))
job        | <WO>(?:现在|目前)?(?:是|当)(?:一名|一个|一位|个|名)<OBJ>
job        | <WO>的(?:职业|工作)是<OBJ>
job        | <WO>(?:现在|目前)?是(?P<obj>[^，,的]{1,8}?(?:<CNJOBS>))(?=$|[，,。！!了])
job c      | <WO><CNWHEN>(?:开始|改行|转行|现在)(?:做|当)了?(?P<obj>[^，,。！!]{1,10}?(?:<CNJOBS>))(?=$|[，,。！!了])
job c      | <WO><CNWHEN>(?P<obj>退休)了
job e      | <WO><CNWHEN>(?P<obj>辞职|离职|失业)了?
job e      | <WO><CNWHEN>不(?:再)?(?:当|做)(?P<obj>[^，,]{1,10}?)了
partner    | \bmy\s+(?:<PARTNER>)(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+<OBJ>
partner    | \bmy\s+(?:<PARTNER>)\s+is\s+(?P<obj><NAME>)(?=\s*(?:[,.!;]|$))
partner    | <SUBJ>(?:have|'ve\s+got)\s+an?\s+(?:<PARTNER>)\s+(?:called|named)\s+<OBJ>
partner c  | <IM>(?:now\s+|happily\s+|officially\s+)?(?P<obj>single|divorced|widowed|separated|married|engaged|in\s+a\s+relationship)\b(?:\s+(?:to|with)\s+(?P<org>[^,;:.!?]+))?
partner c  | (?:\b(?:I|we)|<NAME>\s+and\s+I|\bI\s+and\s+<NAME>)\s+(?:just\s+|finally\s+|recently\s+)?(?:got|are|'re|have\s+been)\s+(?P<obj>married|engaged|divorced)\b
partner e  | (?P<obj><NAME>)\s+and\s+I\s+(?:just\s+|recently\s+|finally\s+)?(?:split\s+up|broke\s+up|separated|divorced|called\s+it\s+off)
partner e  | \b(?:I|we)\s+(?:just\s+|recently\s+|finally\s+)?(?P<obj>split\s+up|broke\s+up|separated|got\s+divorced)\b
partner    | 我(?:有|的)(?:一个)?(?:<CNPARTNER>)[，,]?\s*(?:他|她)?(?:叫|名叫|的名字是|名字叫|是)<OBJ>
partner    | <WO>(?:现在|已经)?有(?P<obj>男朋友|女朋友|对象)了?
partner c  | <WE><CNWHEN>(?:和[^，,]{1,10}?)?(?P<obj>结婚|订婚|离婚)了
partner e  | <WE><CNWHEN>和(?P<obj>[^，,]{1,10}?)分手了
partner e  | 我们<CNWHEN>(?P<obj>分手)了
partner c  | <WO>(?:现在|目前)?(?:是|还是)?(?P<obj>单身)
pet        | <I>have\s+(?:an?|one|two)\s+(?P<pet>dog|cat|puppy|kitten)s?\s+(?:named|called)\s+<OBJ>
pet        | \bmy\s+(?P<pet>dog|cat|puppy|kitten)(?:'s\s+name\s+is|\s+is\s+(?:named|called))\s+<OBJ>
pet        | 我家?(?:有[一两]?[只条]|的)(?P<pet>小狗|小猫|狗|猫)[，,]?它?(?:叫|名叫|的名字是|名字叫)<OBJ>
""")  # noqa: E501
PREFERENCE_RULES = rules(r"""
- x  | \bmy\s+(?:all-time\s+)?(?:favou?rite|fav)\s+(?P<topic>[\w\s-]{1,30}?)\s+(?:is|are)\s+<OBJ>
- x  | ^(?P<obj>[^,;:]+?)\s+(?:is|are)\s+(?:now\s+)?my\s+(?:favou?rite|fav)\s+(?P<topic>[\w\s-]{1,30}?)(?:\s+now)?$
- x  | <WO>(?:现在)?最?(?:喜欢|爱)的(?P<topic>[^，,是]{1,8})是<OBJ>
-    | \bI\s+(?:(?:really|truly|totally|absolutely|definitely|actually|now|still|also|just|kind of|kinda|much|generally|personally|usually|always|mostly|honestly)\s+)*(?P<neg>(?:don't|do not|didn't|no longer|never)\s+(?:really\s+|much\s+)?)?(?P<verb>like|love|enjoy|adore|hate|dislike|detest|can't stand|cannot stand|(?P<excl>prefer))s?\s+<OBJ>
-    | <SUBJ>(?P<neg>gone\s+off|grown\s+tired\s+of|lost\s+(?:my\s+)?interest\s+in|gotten\s+tired\s+of)\s+<OBJ>
- x  | \bI(?:'d| would)\s+(?:much\s+)?rather\s+<OBJ>
-    | <IM>(?P<neg>not\s+)?(?:really\s+)?(?:into|a\s+(?:big\s+|huge\s+)?fan\s+of)\s+<OBJ>
- cx | \bI(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:switched|changed|converted)\s+(?:from\s+(?P<other>[^,;]+?)\s+)?to\s+<OBJ>
- cx | <SUBJ>(?:now\s+|mostly\s+|mainly\s+)?(?:drink|eat|listen\s+to|watch|read|play|wear|drive|ride)\s+(?=[^,;:]*\b(?:instead\s+of|rather\s+than)\b)<OBJ>
uses cx | <SUBJ>(?:just\s+|recently\s+|finally\s+)?(?:migrated|moved|switched|changed|converted|upgraded|ported)\s+(?:the\s+|our\s+|my\s+)?(?P<topic>[\w\s-]{0,20}?)\s*from\s+(?P<other>[^,;]+?)\s+to\s+<OBJ>
uses cx | <SUBJ>(?:just\s+|recently\s+)?(?:moved|migrated|switched)\s+(?:everything|it\s+all|all\s+of\s+it|all\s+(?:my|our)\s+[\w\s]+?|over)\s+to\s+<OBJ>
uses    | <SUBJ>(?:now\s+|mostly\s+|mainly\s+|currently\s+|still\s+|only\s+)?(?:use|code\s+in|write\s+code\s+in)\s+(?!(?:it|this|that|them)\b)<OBJ>
uses    | <SUBJ>(?:manage|track|keep|organi[sz]e|plan|write|take|store)\s+(?:all\s+)?(?:my|our)\s+(?P<topic>[\w\s-]{1,20}?)\s+(?:in|with|on|using)\s+<OBJ>
uses    | \b(?:my|our)\s+(?P<topic>[\w\s-]{1,20}?)\s+(?:runs|is\s+running|is\s+built|is\s+hosted)\s+on\s+<OBJ>
uses    | \b(?:my|our)\s+(?P<topic>[\w\s-]{1,20}?)\s+uses\s+<OBJ>
uses e  | <SUBJ>(?:just\s+|recently\s+|finally\s+)?(?:stopped|quit|gave\s+up|ditched|dropped)\s+using\s+<OBJ>
uses e  | <SUBJ>no\s+longer\s+use\s+<OBJ>
-    | <WO>(?:现在|如今|最近|其实|真的|很|非常|特别|超|挺|比较|一直|还是|也|都|还|已经|真)*(?P<excl>更|最)?(?P<neg>不再|不太|不怎么|不|没那么)?(?:很|太|再|怎么|那么)*(?P<verb>喜欢|爱(?!人|好)|偏爱|偏好|讨厌|厌恶|受不了|热爱|钟爱)<OBJ>
uses cx | <WE><CNWHEN>把(?P<topic>[^，,从]{1,8}?)从(?P<other>[^，,]+?)(?:换|改|迁移|升级|转)(?:成|为|到)了?<OBJ>
- cx | 我(?:现在|已经|最近)*把(?P<other>[^，,]+?)(?:换|改)(?:成|为)了?<OBJ>
- cx | 我(?:现在|已经|最近)*(?:改|换)(?:成|为)?了?<OBJ>
uses    | <WE>(?:现在|平时|一直|主要|都|还|也|目前)*(?:用|使用|在用)(?:的是)?(?P<obj>[A-Za-z][A-Za-z0-9.+#-]*(?:\s[A-Za-z][A-Za-z0-9.+#-]*)*)
uses    | (?:我们|我)的(?P<topic>[^，,的]{1,6}?)(?:用的是|是用|使用的是|用)(?P<obj>[^，,。]+)
uses e  | <WE><CNWHEN>(?:不再用|不用|不再使用|停用了?)(?P<obj>[A-Za-z][A-Za-z0-9.+#-]*(?:\s[A-Za-z][A-Za-z0-9.+#-]*)*)
""")  # noqa: E501
NEG_VERBS = frozenset(
    ("hate", "dislike", "detest", "can't stand", "cannot stand", "讨厌", "厌恶", "受不了")
)
DECISION_RULES = rules(r"""
- | \b(?:we|I)(?:'ve| have)?\s+(?:finally\s+|just\s+)?(?:decided|agreed|settled)\s+(?:to|on|that|upon)?\s*<OBJ>
- | \blet(?:'s|’s| us)\s+(?:go with|use|stick with|pick|choose|adopt|switch to)\s+<OBJ>
- | \b(?:we|I)(?:'ll| will|'re going to| are going to|'m going to| am going to)\s+(?:go with|use|stick with|adopt|pick|choose)\s+<OBJ>
- | \b(?:we|I)\s+(?:went with(?!<COMPANY>)|picked|chose|opted for|settled on)\s+<OBJ>
- | \bthe decision is\s+(?:to\s+)?<OBJ>
- | 我们?(?:已经|最后|最终|还是)?(?:决定|商定|定了|选定)了?<OBJ>
- | (?:我们|那)?就用<OBJ>
- | 我们?(?:最后|最终)?(?:选择|选)了?<OBJ>
""")  # noqa: E501
PLAN_RULES = rules(r"""
- | \b(?:I|we)(?:'m| am|'re| are)\s+(?:going|planning|hoping|intending|about)\s+(?:to|on)\s+<OBJ>
- | \b(?:I|we)\s+(?:plan|intend|hope|aim)\s+to\s+<OBJ>
- | \b(?:I|we)(?:'m| am|'re| are)\s+planning\s+(?:an?|the|my|our)\s+<OBJ>
- | \bmy\s+plan\s+is\s+(?:to\s+)?<OBJ>
- | \b(?:I|we)(?:'ll| will| shall)\s+(?P<obj>[^,;:]*\b(?:<WHEN>)\b[^,;:]*)
- | \b(?:<WHEN>)\s*,?\s*(?:I|we)(?:'ll| will|'m going to| am going to)?\s+<OBJ>
- | 我们?正?(?:打算|计划|准备)<OBJ>
- | 我的计划是<OBJ>
- | (?:<WHEN_CN>)[，,]?我们?(?:要|会|将|打算|准备|想)?<OBJ>
- | 我们?(?:<WHEN_CN>)(?:要|会|将|打算|准备|想)<OBJ>
""")
HABIT_RULES = rules(r"""
- | \b(?:I|we)\s+(?:usually|always|often|normally|typically|generally|regularly|frequently|mostly|never|rarely|tend to)\s+(?!<MIND>)<OBJ>
- | \b(?:<FREQ>)\s*,?\s*(?:I|we)\s+<OBJ>
- | \b(?:I|we)\s+(?!(?:will|'ll|am|was|did|would|could|should|might)\b)(?P<obj>(?:[\w']+\s+){1,6}?(?:<FREQ>)\b[^,;:]*)
- | 我们?(?:通常|平时|一般|经常|常常|总是|往往|习惯|一向|<FREQ_CN>)<OBJ>
- | <FREQ_CN>[，,]?我们?<OBJ>
""")  # noqa: E501
# priority order: where two matches overlap, the earlier family wins
FAMILIES: tuple[tuple[Kind, list[Rule]], ...] = (
    ("biography", BIOGRAPHY_RULES),
    ("preference", PREFERENCE_RULES),
    ("decision", DECISION_RULES),
    ("plan", PLAN_RULES),
    ("habit", HABIT_RULES),
)
